// git-venom: turn checkpoints for OpenCode. Written by `git venom-checkpoint
// hook install opencode`, removed by `hook uninstall opencode`: edit it and
// `git venom-checkpoint doctor` reports it changed. It sends each event as
// JSON to the command below (docs/harness.md#opencode).
const command = COMMAND_ARGV

export const GitVenom = async ({ $, client, directory }) => {
  const pending = new Set() // hook runs not finished: dispose awaits them
  const parents = new Map() // session id -> its parent's, "" for a top session
  const prompts = new Map() // top session id -> user message id of its open turn

  // run sends one payload and returns the hook's stdout ("" on failure: a
  // hook never stops OpenCode; it logs its own failures).
  const run = (payload) => {
    const json = JSON.stringify({ ...payload, cwd: directory })
    const p = $`${command} < ${new Response(json)}`.cwd(directory).quiet().nothrow()
      .then((r) => r.stdout.toString(), () => "")
    pending.add(p)
    p.finally(() => pending.delete(p))
    return p
  }

  // top is the session whose turn a session's events belong to: a
  // sub-agent's (task tool) session has a parentID.
  const top = async (id) => {
    for (let hops = 0; hops < 16; hops++) {
      if (!parents.has(id)) {
        let parent = ""
        try {
          const r = await client.session.get({ path: { id } })
          parent = r?.data?.parentID ?? ""
        } catch {}
        parents.set(id, parent)
      }
      const parent = parents.get(id)
      if (!parent) return id
      id = parent
    }
    return id
  }

  return {
    event: async ({ event }) => {
      const props = event.properties ?? {}
      if (event.type === "session.created") {
        const info = props.info ?? {}
        parents.set(info.id, info.parentID ?? "")
        if (!info.parentID) await run({ hook_event_name: "session.created", session_id: info.id })
      } else if (event.type === "session.idle") {
        // session.idle comes twice after an abort or a failed call; only
        // the first ends the turn (the hook ignores a repeated end too).
        const id = props.sessionID
        if ((await top(id)) !== id || !prompts.has(id)) return
        const message = prompts.get(id)
        prompts.delete(id)
        await run({ hook_event_name: "session.idle", session_id: id, prompt_id: message })
      }
    },
    "chat.message": async (input, output) => {
      const id = input.sessionID
      if ((await top(id)) !== id) return // a sub-agent's prompt is its parent's turn
      const message = output.message.id
      prompts.set(id, message)
      const out = await run({ hook_event_name: "chat.message", session_id: id, prompt_id: message })
      // The rollback note, when there is one, goes with the prompt.
      let note = ""
      try {
        note = JSON.parse(out)?.hookSpecificOutput?.additionalContext ?? ""
      } catch {}
      const part = output.parts.find((p) => p.type === "text")
      if (note && part) part.text = note + "\n\n" + part.text
    },
    "tool.execute.after": async (input, output) => {
      await run({
        hook_event_name: "tool.execute.after", session_id: await top(input.sessionID), tool_name: input.tool,
        tool_input: { ...(input.args ?? {}), filepath: output?.metadata?.filepath },
      })
    },
    // `opencode run` exits right after session.idle, which it does not
    // await; it awaits dispose.
    dispose: async () => {
      await Promise.allSettled([...pending])
    },
  }
}
