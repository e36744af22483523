// The official MCP TypeScript SDK's client against `warren mcp`, for
// tests/e2e/test_mcp_server.c. Spawns WARREN mcp [ARGS] in WS through
// StdioClientTransport (the environment passed on whole), and prints one
// JSON object a line for the test to check.
//
//   node mcp_sdk_client.mjs SDKDIR WARREN WS run        run, diff, apply, runs
//   node mcp_sdk_client.mjs SDKDIR WARREN WS apply RUN  apply, --allow-apply
//   node mcp_sdk_client.mjs SDKDIR WARREN WS cancel     a run, then its cancel
import { pathToFileURL } from "node:url";

const [sdk, warren, ws, mode, arg] = process.argv.slice(2);
const esm = (p) => pathToFileURL(`${sdk}/dist/esm/${p}`).href;
const { Client } = await import(esm("client/index.js"));
const { StdioClientTransport } = await import(esm("client/stdio.js"));

const say = (o) => console.log(JSON.stringify(o));
const text = (r) => r.content.map((c) => c.text).join("");

async function connect(args) {
	const transport = new StdioClientTransport({
		command: warren, args: ["mcp", ...args], cwd: ws,
		env: process.env, stderr: "inherit",
	});
	let version = null;
	const set = transport.setProtocolVersion?.bind(transport);
	transport.setProtocolVersion = (v) => { version = v; set?.(v); };
	const client = new Client({ name: "warren-test", version: "1.0.0" });
	await client.connect(transport);
	say({ step: "init", version, server: client.getServerVersion().name });
	return client;
}

async function call(client, step, name, args, opts = {}) {
	const r = await client.callTool({ name, arguments: args }, undefined,
	    { timeout: 120000, ...opts });
	say({ step, isError: r.isError === true, text: text(r),
	    structured: r.structuredContent ?? null });
	return r;
}

async function runMode() {
	const client = await connect([]);
	const tools = await client.listTools();
	say({ step: "tools", names: tools.tools.map((t) => t.name),
	    runRequired: tools.tools.find((t) => t.name === "run")
	    ?.inputSchema?.required ?? null });
	const progress = [];
	const r = await call(client, "run", "run", { task: "MCP-TASK: write "
	    + "the file", profile: "general", schema: { type: "object",
	    properties: { n: { type: "integer" } }, required: ["n"] } },
	    { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true });
	say({ step: "progress", n: progress.length,
	    increasing: progress.every((p, i) => i === 0 ||
	    p.progress > progress[i - 1].progress),
	    messages: progress.map((p) => p.message) });
	const m = /Run (\d+): /.exec(text(r));
	const run = m ? Number(m[1]) : 0;
	say({ step: "runid", run });
	await call(client, "diff", "diff", { run });
	await call(client, "apply", "apply", { run });
	await call(client, "runs", "runs", {});
	await call(client, "show", "show", { run });
	await call(client, "outside", "run", { task: "MCP-TASK", workspace: "/" });
	await call(client, "queue_add", "queue_add", { task: "QUEUED-TASK",
	    profile: "explore" });
	await call(client, "queue_status", "queue_status", { job: 1 });
	try {
		await client.callTool({ name: "run", arguments: { task: 7 } });
		say({ step: "badargs", threw: false });
	} catch (e) {
		say({ step: "badargs", threw: true, code: e.code, message: e.message });
	}
	await client.close();
}

async function applyMode() {
	const client = await connect(["--allow-apply"]);
	// A path that looks like an option is a path: it selects nothing.
	await call(client, "apply_dash", "apply", { run: Number(arg),
	    paths: ["--include-sensitive"] });
	await call(client, "apply", "apply", { run: Number(arg),
	    paths: ["mcp-file.txt"] });
	await client.close();
}

// A run whose model never answers: cancelled once it has started.
async function cancelMode() {
	const client = await connect([]);
	const ac = new AbortController();
	let started = false, startedMessage = "";
	const p = client.callTool({ name: "run", arguments: { task: "MCP-HANG",
	    profile: "general" } }, undefined, { signal: ac.signal,
	    timeout: 120000, onprogress: (pr) => {
		if (!started && /^run \d+ started/.test(pr.message ?? "")) {
			started = true;
			startedMessage = pr.message;
			say({ step: "started", message: pr.message });
			ac.abort("the test cancels it");
		}
	} });
	try {
		await p;
		say({ step: "cancel", threw: false });
	} catch (e) {
		say({ step: "cancel", threw: true, message: String(e.message ?? e) });
	}
	// The server goes on after a cancel, and the run ends (cancelled)
	// while the client is still there: wait up to 20 s for its status.
	const run = Number(/^run (\d+)/.exec(started ? "run " +
	    /\d+/.exec(startedMessage)[0] : "run 0")[1]);
	let status = null;
	for (let i = 0; i < 100; i++) {
		const r = await client.callTool({ name: "runs", arguments: {} });
		status = JSON.parse(text(r)).find((x) => x.id === run)?.status;
		if (status !== "running")
			break;
		await new Promise((res) => setTimeout(res, 200));
	}
	say({ step: "after", run, status });
	await client.close();
}

const modes = { run: runMode, apply: applyMode, cancel: cancelMode };
if (!modes[mode]) {
	console.error(`mcp_sdk_client.mjs: no mode ${mode}`);
	process.exit(2);
}
await modes[mode]();
