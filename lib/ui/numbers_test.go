package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestThousandsAndPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 5000: "5,000", 1234567: "1,234,567", -5000: "-5,000"} {
		assert.Equal(t, want, Thousands(n), n)
	}
	assert.Equal(t, "1 file", Plural(1, "file", "files"))
	assert.Equal(t, "0 files", Plural(0, "file", "files"))
	assert.Equal(t, "5,000 files", Plural(5000, "file", "files"))
}
