package tests

import (
	"os"
	"strconv"
)

// randomSeed is the seed of a randomized test: VENOM_TEST_SEED when set,
// else def. long says VENOM_TEST_LONG asks for the long form.
func randomSeed(def int64) (seed int64, long bool) {
	seed = def
	if s := os.Getenv("VENOM_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	return seed, os.Getenv("VENOM_TEST_LONG") != ""
}
