package rollback

import "testing"

// The harnesses' own marks are lib/harness's (its registry test checks
// each); here, one fake harness's.
func TestDetectCaller(t *testing.T) {
	fake := func(getenv func(string) string) bool { return getenv("FAKE_HARNESS") == "1" }
	cases := []struct {
		env   map[string]string
		agent bool
	}{
		{map[string]string{}, false},
		{map[string]string{"FAKE_HARNESS": "1"}, true},
		{map[string]string{"FAKE_HARNESS": "0"}, false},
		{map[string]string{"FAKE_HARNESS": "1", "VENOM_CALLER": "person"}, false},
		{map[string]string{"VENOM_CALLER": "agent"}, true},
	}
	for _, c := range cases {
		got := DetectCaller(func(k string) string { return c.env[k] }, fake)
		if got.Agent != c.agent {
			t.Errorf("%v: agent=%v, want %v", c.env, got.Agent, c.agent)
		}
	}
	if got := DetectCaller(func(k string) string { return map[string]string{"VENOM_AGENT": "a1"}[k] }, fake); got.ID != "a1" {
		t.Errorf("id %q", got.ID)
	}
}
