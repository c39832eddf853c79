package opencode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/state"
)

// Adapter is OpenCode's rewind (docs/harness.md#rewind): a fork of the
// session before a user message (POST /session/{id}/fork), touching no file
// and leaving the person's session as it was; OpenCode's revert would
// truncate that session in place and restore files of its own. The fork is
// asked of an `opencode serve --pure` started on 127.0.0.1 with a random
// password: --pure so git-venom's plugin does not call back into the
// rollback holding the lock, the password so no other local user reaches it.
type Adapter struct{}

// CanRewind: a turn the plugin reported, in a session it named.
func (Adapter) CanRewind(a *agents.Agent, t *agents.Turn) bool {
	return t != nil && t.Session != "" && t.HarnessTurn != ""
}

// HasHarnessID: OpenCode forks at a turn's user message id (harness_turn).
func (Adapter) HasHarnessID(t *agents.Turn) bool { return t.HarnessTurn != "" }

// Ready: the fork needs the opencode program.
func (Adapter) Ready(a *agents.Agent) error {
	if _, err := exec.LookPath("opencode"); err != nil {
		return fmt.Errorf("opencode is not on PATH")
	}
	return nil
}

// ForkPoint is the user message a rewind through turn t forks at: that of
// the next turn in t's session, "" when t is its session's last (the
// whole session is copied).
func ForkPoint(a *agents.Agent, t *agents.Turn) string {
	after := false
	for _, u := range a.Turns {
		switch {
		case u.ID == t.ID:
			after = true
		case after && u.Session == t.Session && u.HarnessTurn != "":
			return u.HarnessTurn
		}
	}
	return ""
}

// Rewind forks t's session before the next turn's user message.
func (Adapter) Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, _ conversation.Options) (*conversation.Rewound, error) {
	at := ForkPoint(a, t)
	srv, err := serve(ctx, s.Environ, a.Tree)
	if err != nil {
		return nil, refused(a.ID, t.Session, at, err)
	}
	defer srv.stop()
	id, err := srv.fork(ctx, t.Session, at)
	if err != nil {
		return nil, refused(a.ID, t.Session, at, err)
	}
	return &conversation.Rewound{HarnessSession: id, Resume: []string{"opencode", "-s", id}}, nil
}

func refused(agent, src, at string, err error) error {
	members := map[string]string{"agent": agent, "harness_session": src, "message": err.Error()}
	if at != "" {
		members["fork_at"] = at
	}
	return errcode.Newf(errcode.ConflictHarnessForkRefused, members,
		"OpenCode cannot fork session %s: %v", src, err).
		Hint("roll back the files only with --restore=files")
}

// server is one `opencode serve` the rewind runs.
type server struct {
	cmd      *exec.Cmd
	url      string
	dir      string
	password string
}

var listening = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
})

// serveWait bounds the server's start: about 2 s on 2 cores, more on a
// first start that migrates its database.
const serveWait = 60 * time.Second

func serve(ctx context.Context, env []string, dir string) (*server, error) {
	var pw [16]byte
	if _, err := rand.Read(pw[:]); err != nil {
		return nil, err
	}
	s := &server{dir: dir, password: hex.EncodeToString(pw[:])}
	s.cmd = exec.Command("opencode", "serve", "--pure", "--hostname", "127.0.0.1", "--port", "0")
	s.cmd.Dir = dir
	var keep []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OPENCODE_SERVER_") {
			keep = append(keep, kv)
		}
	}
	s.cmd.Env = append(keep, "OPENCODE_SERVER_USERNAME=opencode", "OPENCODE_SERVER_PASSWORD="+s.password,
		"OPENCODE_DISABLE_AUTOUPDATE=1")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = io.Discard
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start opencode serve: %v", err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening().FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, out)
	}()
	timer := time.NewTimer(serveWait)
	defer timer.Stop()
	select {
	case u, ok := <-found:
		if ok {
			s.url = u
			return s, nil
		}
		s.stop()
		return nil, fmt.Errorf("opencode serve exited before listening")
	case <-timer.C:
	case <-ctx.Done():
	}
	s.stop()
	return nil, fmt.Errorf("opencode serve did not listen within %s", serveWait)
}

// stop ends the server and whatever it started.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// fork asks POST /session/{id}/fork {messageID}: the new session's id.
func (s *server) fork(ctx context.Context, session, at string) (string, error) {
	body := map[string]string{}
	if at != "" {
		body["messageID"] = at
	}
	b, _ := json.Marshal(body)
	u := s.url + "/session/" + url.PathEscape(session) + "/fork?directory=" + url.QueryEscape(s.dir)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("opencode", s.password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fork answered %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("fork answered no session id")
	}
	return out.ID, nil
}
