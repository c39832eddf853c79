package caller

import "testing"

func TestDetect(t *testing.T) {
	cases := []struct {
		env   map[string]string
		agent bool
	}{
		{map[string]string{}, false},
		{map[string]string{"CLAUDECODE": "1"}, true},
		{map[string]string{"CLAUDECODE": "0"}, false},
		{map[string]string{"CODEX_THREAD_ID": "x"}, true},
		{map[string]string{"CODEX_SANDBOX": "seatbelt"}, true},
		{map[string]string{"CODEX_SANDBOX_NETWORK_DISABLED": "1"}, true},
		{map[string]string{"CLAUDECODE": "1", "VENOM_CALLER": "person"}, false},
		{map[string]string{"VENOM_CALLER": "agent"}, true},
	}
	for _, c := range cases {
		got := Detect(func(k string) string { return c.env[k] })
		if got.Agent != c.agent {
			t.Errorf("%v: agent=%v, want %v", c.env, got.Agent, c.agent)
		}
	}
	if got := Detect(func(k string) string { return map[string]string{"VENOM_AGENT": "a1"}[k] }); got.ID != "a1" {
		t.Errorf("id %q", got.ID)
	}
}
