package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/suggest"
)

// HelpCmd is the help verb, `git venom-checkpoint help [<verb>...]`:
// the same text as <verb> -h. (--help opens the manual: git turns
// git venom-checkpoint --help into git help, and Run does the same for
// --help anywhere else.)
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
		_, err := kctx.Kong.Parse([]string{"-h"})
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
	where := strings.Join(append([]string{app}, path...), " ")
	all := verbs(node)
	e := errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"verb": word, "verbs": all},
		"%s is not a verb of %s", quote.C(word), where)
	switch close := suggest.Close(word, all); len(close) {
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

// helpArgs reads `help [...]` as -h in a grammar without a help verb
// (git venom-rollback help, git venom-diff help): no checkpoint is named
// help, so the word is free.
func helpArgs(parser *kong.Kong, args []string) []string {
	if len(args) > 0 && args[0] == "help" && child(parser.Model.Node, "help") == nil {
		return []string{"-h"}
	}
	return args
}

// printHelp is kong's help, and for the bare command of a grammar whose
// default verb takes its flags (git venom-checkpoint is git venom-checkpoint
// take), that verb's usage and flags too: -h shows what a bare call does.
// A positional argument with a usage tag is shown as that tag says
// (rollback's one checkpoint, which kong would show as [<checkpoint> ...]
// for the slice that lets it refuse a second one by name).
func printHelp(options kong.HelpOptions, ctx *kong.Context) error {
	out := ctx.Stdout
	var buf bytes.Buffer
	ctx.Stdout = &buf
	defer func() {
		ctx.Stdout = out
		_, _ = out.Write(positionalUsage(ctx.Model.Node, buf.Bytes()))
	}()
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

// positionalUsage rewrites kong's summary of each positional argument
// that has a usage tag.
func positionalUsage(root *kong.Node, text []byte) []byte {
	_ = kong.Visit(root, func(n kong.Visitable, next kong.Next) error {
		if node, ok := n.(*kong.Node); ok {
			for _, p := range node.Positional {
				u, was := p.Tag.Get("usage"), p.Summary()
				if u == "" {
					continue
				}
				// In the Arguments table, padded to keep the column.
				if pad := len(was) - len(u); pad > 0 {
					text = bytes.ReplaceAll(text, []byte(was+"  "), []byte(u+strings.Repeat(" ", pad)+"  "))
				}
				text = bytes.ReplaceAll(text, []byte(was), []byte(u))
			}
		}
		return next(nil)
	})
	return text
}
