package repo

import "github.com/git-venom/git-venom/lib/gitfiles"

// Files is where git reads r's config, attributes and exclude files from.
func (r *Repo) Files() gitfiles.Repo {
	return gitfiles.Repo{Top: r.Top, GitDir: r.GitDir, CommonDir: r.CommonDir, Env: r.Git.Env}
}
