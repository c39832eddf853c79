package journal

// PrunedRecord is checkpoint.pruned {agent, checkpoints} (docs/checkpoints.md#retention-and-clean).
type PrunedRecord struct {
	Agent       string   `json:"agent"`
	Checkpoints []string `json:"checkpoints"`
}

// RemovedRecord is checkpoint.removed {agent, repo, removed, kept}
// (docs/json.md#events), plus the ids whose refs went, for the fold.
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
