# bash completion for git-venom: git venom-checkpoint, git venom-rollback
# and git venom-diff. install.sh puts it where bash-completion looks for
# each (share/bash-completion/completions/git-venom-<cmd>): git's own
# completion loads it on the first `git venom-<cmd> <TAB>`. The words come
# from the command itself (`git-venom-<cmd> __complete <word>...`), so
# they are always its verbs, flags and values.

# _git_venom_complete CMD: git's completion has set words, cword, cur and
# __git_cmd_idx (where CMD is among the words).
# The command exits 3 where the word is a path (after --, or --path's
# value): only there may bash fall back to file names. Candidates keep the
# command's order (k2 before k10).
_git_venom_complete ()
{
	local cmd="$1" c found rc IFS=$'\n'
	local -a typed=("${words[@]:__git_cmd_idx+1:cword-__git_cmd_idx-1}")
	COMPREPLY=()
	found=$(__git "$cmd" __complete "${typed[@]}" "$cur")
	rc=$?
	if [ $rc != 3 ]; then
		compopt +o default +o bashdefault 2>/dev/null
	fi
	compopt -o nosort 2>/dev/null
	for c in $found; do
		case "$cur" in
		--*=*) c="${c#*=}" ;; # bash replaces only what follows the =
		esac
		case "$c" in
		*=) COMPREPLY+=("$c") ;;
		*) COMPREPLY+=("$c ") ;;
		esac
	done
}

_git_venom_checkpoint () { _git_venom_complete venom-checkpoint; }
_git_venom_rollback () { _git_venom_complete venom-rollback; }
_git_venom_diff () { _git_venom_complete venom-diff; }
