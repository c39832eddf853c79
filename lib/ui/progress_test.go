package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBytes_AsGitsProgressShowsThem(t *testing.T) {
	assert.Equal(t, "512 bytes", Bytes(512))
	assert.Equal(t, "1.50 KiB", Bytes(1536))
	assert.Equal(t, "387.20 MiB", Bytes(406005350))
	assert.Equal(t, "2.00 GiB", Bytes(2<<30))
}

func TestProgress_SilentWithoutATerminal(t *testing.T) {
	s, _, errb := Test()
	p := s.Progress("working")
	p.Stop()
	p.Stop()
	assert.Empty(t, errb.String())
}
