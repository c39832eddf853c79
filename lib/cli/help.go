package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/quote"
)

// HelpCmd is the help verb, `git venom-checkpoint help [<verb>...]`, as
// git help is git's: the same text as <verb> -h. (git venom-checkpoint
// --help never reaches the binary: git turns it into man.)
type HelpCmd struct {
	Verb []string `arg:"" optional:"" name:"verb" help:"The verb to explain, as list or hook install."`
}

// Run prints the verb's help, or suggests a verb for a mistyped one.
func (h *HelpCmd) Run(kctx *kong.Context) error {
	node := kctx.Model.Node
	for i, word := range h.Verb {
		next := child(node, word)
		if next == nil {
			return unknownVerb(kctx.Model.Name, h.Verb[:i], word, node)
		}
		node = next
	}
	if len(h.Verb) == 0 {
		// The whole command's help, as -h: traced as [], the default
		// verb would be chosen and only its help shown.
		_, err := kctx.Kong.Parse([]string{"--help"})
		return err
	}
	target, err := kong.Trace(kctx.Kong, h.Verb)
	if err != nil {
		return err
	}
	return target.PrintUsage(false)
}

// child is node's verb named word (or one of its aliases).
func child(node *kong.Node, word string) *kong.Node {
	for _, c := range node.Children {
		if c.Type != kong.CommandNode {
			continue
		}
		if c.Name == word {
			return c
		}
		for _, a := range c.Aliases {
			if a == word {
				return c
			}
		}
	}
	return nil
}

// verbs lists node's verbs as help shows them.
func verbs(node *kong.Node) []string {
	var out []string
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

// unknownVerb is invalid_params.usage for a word that is not a verb of
// node, with the verbs it is likely a typo of (git's "did you mean").
func unknownVerb(app string, path []string, word string, node *kong.Node) error {
	where := strings.Join(append([]string{"git " + strings.TrimPrefix(app, "git-")}, path...), " ")
	all := verbs(node)
	e := errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"verb": word, "verbs": all},
		"%s is not a verb of %s", quote.C(word), where)
	switch close := Suggest(word, all); len(close) {
	case 0:
		e.Hint("the verbs are %s; %s help <verb> explains one", strings.Join(all, ", "), where)
	case 1:
		e.Hint("did you mean %s?", strings.Join(append([]string{where}, close[0]), " "))
	default:
		e.Hint("did you mean one of %s?", strings.Join(close, ", "))
	}
	return e
}

// verbTypo turns kong's "unexpected argument X" into unknownVerb when X
// stands where a verb would: the grammar has verbs, a default verb took X
// because it matched none, and no verb came before it.
func verbTypo(parser *kong.Kong, args []string, err error) error {
	var pe *kong.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	word, ok := strings.CutPrefix(pe.Error(), "unexpected argument ")
	if !ok || strings.ContainsAny(word, " ,") {
		return err
	}
	root := parser.Model.Node
	if len(verbs(root)) == 0 {
		return err
	}
	for _, a := range args {
		if a == word {
			return unknownVerb(parser.Model.Name, nil, word, root)
		}
		if a == "--" || child(root, a) != nil {
			return err
		}
	}
	return err
}

// helpArgs reads `help [...]` as --help in a grammar without a help verb
// (git venom-rollback help, git venom-diff help): no checkpoint is named
// help, so the word is free.
func helpArgs(parser *kong.Kong, args []string) []string {
	if len(args) > 0 && args[0] == "help" && child(parser.Model.Node, "help") == nil {
		return []string{"--help"}
	}
	return args
}

// printHelp is kong's help, and for the bare command of a grammar whose
// default verb takes its flags (git venom-checkpoint is git venom-checkpoint
// take), that verb's usage and flags too: -h shows what a bare call does.
func printHelp(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	def := ctx.Model.DefaultCmd
	if ctx.Selected() != nil || def == nil || def.Tag.Default != "withargs" {
		return nil
	}
	fmt.Fprintf(ctx.Stdout, "\nWith no verb, %s runs %s:\n\n", ctx.Model.Name, def.Name)
	verb, err := kong.Trace(ctx.Kong, []string{def.Name})
	if err != nil {
		return err
	}
	options.NoAppSummary = false
	return kong.DefaultHelpPrinter(options, verb)
}

// Suggest lists the candidates word is likely a typo of: a prefix of one,
// or within two edits (kong's rule for flags, so verbs and flags agree).
func Suggest(word string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, word) || editDistance(c, word) <= 2 {
			out = append(out, c)
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
