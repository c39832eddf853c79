package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Client speaks JSON-RPC to `codex app-server` over its stdio: one JSON
// object a line each way, requests with an id, notifications without, and
// no "jsonrpc" member from the server (Codex 0.171.0,
// tests/testdata/hooks/codex/app-server).
type Client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex // guards next, waiting and writes
	next   int
	wait   map[int]chan reply
	done   chan struct{} // closed when the server's stdout ends
	stderr *tail
}

type reply struct {
	Result json.RawMessage
	Err    *RPCError
}

// RPCError is a JSON-RPC error the server answered with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// ErrExited: the server went away before it answered.
var ErrExited = errors.New("codex app-server exited")

// Start runs `bin app-server` in dir. ctx bounds the process's whole life.
func Start(ctx context.Context, bin, dir string, env []string) (*Client, error) {
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &Client{cmd: cmd, stdin: stdin, wait: map[int]chan reply{}, done: make(chan struct{}), stderr: &tail{}}
	cmd.Stderr = c.stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.read(stdout)
	return c, nil
}

// read dispatches the server's lines: answers to their callers, its own
// requests answered "method not found", notifications dropped.
func (c *Client) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case len(m.ID) > 0 && m.Method != "":
			_ = c.send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601,
				"message": "git-venom does not handle " + m.Method}})
		case len(m.ID) > 0:
			var id int
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			c.mu.Lock()
			ch := c.wait[id]
			delete(c.wait, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- reply{Result: m.Result, Err: m.Error}
			}
		}
	}
}

func (c *Client) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// Call sends a request and decodes its result into out (when not nil).
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("%w: %v", ErrExited, err)
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return r.Err
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-c.done:
		return fmt.Errorf("%w: %s", ErrExited, c.stderr.String())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string) error { return c.send(map[string]any{"method": method}) }

// Initialize is the handshake: initialize, then the initialized notification.
func (c *Client) Initialize(ctx context.Context, version string) error {
	params := map[string]any{"clientInfo": map[string]any{"name": "git-venom", "title": nil, "version": version},
		"capabilities": nil}
	if err := c.Call(ctx, "initialize", params, nil); err != nil {
		return err
	}
	return c.Notify("initialized")
}

// Thread is the part of a thread the client reads.
type Thread struct {
	ID           string `json:"id"`
	ForkedFromID string `json:"forkedFromId"`
}

// Fork copies a thread through lastTurn, inclusive, without replaying its
// history in the answer, and returns the new thread.
func (c *Client) Fork(ctx context.Context, thread, lastTurn string) (*Thread, error) {
	var res struct {
		Thread Thread `json:"thread"`
	}
	err := c.Call(ctx, "thread/fork", map[string]any{"threadId": thread, "lastTurnId": lastTurn, "excludeTurns": true}, &res)
	if err != nil {
		return nil, err
	}
	if res.Thread.ID == "" {
		return nil, errors.New("thread/fork answered without a thread id")
	}
	return &res.Thread, nil
}

// Unsubscribe stops the server's notifications about a thread.
func (c *Client) Unsubscribe(ctx context.Context, thread string) error {
	return c.Call(ctx, "thread/unsubscribe", map[string]any{"threadId": thread}, nil)
}

// Close ends the server: stdin closed, a short wait, then a kill.
func (c *Client) Close() {
	_ = c.stdin.Close()
	exited := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-exited
	}
}

// tail keeps the last few KB of stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "; ")
}
