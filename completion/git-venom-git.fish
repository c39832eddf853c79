# fish completion of `git venom-<cmd>`. install.sh puts it in
# share/fish/vendor_conf.d as git-venom.fish, which fish reads at start:
# fish's own git completion hands `git <cmd>` to git-<cmd>'s completions
# only in newer releases (3.6's passes `git-git-<cmd>`), so the three
# commands are registered for `git` here. The words come from the command
# itself (`git-venom-<cmd> __complete <word>...`), as in git-venom.fish.
function __git_venom_words --description 'the git-venom command and its words, after git and its options'
    set -l words (commandline -opc)
    set -e words[1]
    while set -q words[1]
        switch $words[1]
            case -C -c --git-dir --work-tree --namespace --config-env
                set -e words[1]
                set -e words[1]
            case '-*'
                set -e words[1]
            case 'venom-*'
                string join \n -- $words
                return 0
            case '*'
                return 1
        end
    end
    return 1
end

function __git_venom_using -a cmd --description 'whether the command line is git venom-<cmd>'
    set -l words (__git_venom_words)
    and test "$words[1]" = "$cmd"
end

for cmd in checkpoint rollback diff
    complete -c git -f -n "__git_venom_using venom-$cmd" \
        -a "(git-venom-$cmd __complete (__git_venom_words)[2..-1] (commandline -ct))"
end
