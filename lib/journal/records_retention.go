package journal

// PrunedRecord is checkpoint.pruned {agent, checkpoints} (RFC 5.2).
type PrunedRecord struct {
	Agent       string   `json:"agent"`
	Checkpoints []string `json:"checkpoints"`
}

// RemovedRecord is checkpoint.removed {agent, repo, removed, kept} (RFC
// 11.2), plus the ids whose refs went, for the fold.
type RemovedRecord struct {
	Agent       string   `json:"agent"`
	Repo        string   `json:"repo"`
	Removed     int      `json:"removed"`
	Kept        int      `json:"kept"`
	Checkpoints []string `json:"checkpoints"`
}

// Archived is agent.archived, logged by clean.
type Archived struct {
	Agent string `json:"agent"`
}
