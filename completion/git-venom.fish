# fish completion for git-venom. install.sh puts it in
# share/fish/vendor_completions.d as git-venom-checkpoint.fish,
# git-venom-rollback.fish and git-venom-diff.fish: fish's git completion
# hands `git venom-<cmd> <TAB>` to the completions of git-venom-<cmd>. The
# words come from the command itself (`git-venom-<cmd> __complete <word>...`).
for cmd in git-venom-checkpoint git-venom-rollback git-venom-diff
    complete -c $cmd -f -a "($cmd __complete (commandline -opc)[2..-1] (commandline -ct))"
end
