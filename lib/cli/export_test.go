package cli

// RunKong is Run without a grammar's Reader: kong reads every argument list.
func RunKong(env *Env, grammar any, args []string) int {
	return guarded(env, func() int { return runKong(env, grammar, args) })
}
