package journal

// RollbackStart is rollback.started (docs/json.md#events data, plus the plan).
type RollbackStart struct {
	Agent      string `json:"agent"`
	Checkpoint string `json:"checkpoint"`
	Safety     string `json:"safety"`
	Restore    string `json:"restore"`
	Plan       string `json:"plan"`
	// Paths are a path-scoped rollback's pathspecs (pathspec.Set.Strings,
	// from the top); absent when the whole tree goes back.
	Paths []string `json:"paths,omitempty"`
	// Copy is the fetched copy (<remote>/<machine>/<agent>) whose
	// checkpoint Checkpoint the files came from; absent for the agent's own.
	Copy string `json:"copy,omitempty"`
	// Revert is what a revert took back (docs/rollback.md#revert): t<n>,
	// or k<a>..k<b>; Checkpoint is then its end. Absent for a rollback.
	Revert string `json:"revert,omitempty"`
}

// RollbackEnd is rollback.ended (docs/json.md#events data).
type RollbackEnd struct {
	Agent      string   `json:"agent"`
	Checkpoint string   `json:"checkpoint"`
	Safety     string   `json:"safety"`
	Restore    string   `json:"restore"`
	OK         bool     `json:"ok"`
	Code       string   `json:"code,omitempty"`
	After      string   `json:"after,omitempty"`
	Drops      []string `json:"drops,omitempty"`
	Paths      []string `json:"paths,omitempty"`  // as RollbackStart's
	Copy       string   `json:"copy,omitempty"`   // as RollbackStart's
	Revert     string   `json:"revert,omitempty"` // as RollbackStart's
	// Unseen are the files the rollback wrote that its capture after
	// did not see, ignored by then (a .gitignore it brought in covers
	// them): its undo puts them back too (docs/rollback.md#undo).
	Unseen []string `json:"unseen,omitempty"`
}

// Binding is agent.binding: the agent's harness conversation. An empty
// harness_session clears it (a rollback to before the first turn).
type Binding struct {
	Agent          string `json:"agent"`
	HarnessSession string `json:"harness_session"`
	ForkSource     string `json:"fork_source,omitempty"`
	ForkAt         string `json:"fork_at,omitempty"`
	Process
}
