#compdef git-venom-checkpoint git-venom-rollback git-venom-diff
# zsh completion for git-venom. install.sh puts it in share/zsh/site-functions
# as _git-venom-checkpoint, _git-venom-rollback and _git-venom-diff: zsh's
# git completion calls _git-<cmd> for `git venom-<cmd> <TAB>`. The words come
# from the command itself (`git-venom-<cmd> __complete <word>...`).
local prog="git-${words[1]#git-}" c
local -a found spaced unspaced
found=(${(f)"$($prog __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)"})
for c in $found; do
	if [[ $c == *= ]]; then unspaced+=($c); else spaced+=($c); fi
done
compadd -S '' -a unspaced
compadd -a spaced
