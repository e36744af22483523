// queue_compare.mjs: claim + complete throughput of graphile-worker and
// pg-boss, as bench_queue measures warren's (docs/benchmarks.md, "Queue on
// PostgreSQL"); run by bench/bench_queue_pg.sh compare, which installs the
// two from npm into a temporary directory (NODE_PATH) and gives the server.
//
//   node queue_compare.mjs graphile|pgboss URL JOBS PROCS SCHEMA
//
// Adds JOBS no-op jobs in a schema of their own, then starts PROCS worker
// processes (each one job at a time), waits until every one is connected,
// and lets them go together. graphile-worker: its own runner (run(),
// concurrency 1), the parent watching its jobs table until it is empty;
// pg-boss: fetch() then complete() until fetch finds nothing (its
// worker loop polls every 0.5 s at least). Prints one line:
//   SYSTEM PROCS JOBS SECONDS RATE
// the time from the go to the last job done; the schema is dropped after.
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.env.NODE_PATH ?? ".", "x.js"));
const pg = require("pg");
const [system, url, jobsArg, procsArg, schema] = process.argv.slice(2);
const jobs = Number(jobsArg), procs = Number(procsArg);
const DEADLINE_MS = 600000;

function fail(msg) {
	console.error(`queue_compare: ${system}: ${msg}`);
	process.exit(1);
}

async function sql(text, values) {
	const c = new pg.Client({ connectionString: url });
	await c.connect();
	try {
		return await c.query(text, values);
	} finally {
		await c.end();
	}
}

async function graphileAdd() {
	const gw = require("graphile-worker");
	await gw.runMigrations({ connectionString: url, schema });
	const u = await gw.makeWorkerUtils({ connectionString: url, schema });
	for (let i = 0; i < jobs; i += 1000) {
		const batch = [];
		for (let k = i; k < Math.min(jobs, i + 1000); k++)
			batch.push({ identifier: "noop", payload: { k } });
		await u.addJobs(batch);
	}
	await u.release();
}

// Jobs left, on one connection kept open (a connect costs the server a
// SCRAM exchange: polling with new ones would take CPU from the workers).
async function graphileLeft(c) {
	const r = await c.query(`SELECT count(*)::int AS n FROM ${schema}._private_jobs`);
	return r.rows[0].n;
}

async function graphileWorker() {
	const gw = require("graphile-worker");
	await waitGo();
	const runner = await gw.run({
		connectionString: url, schema, concurrency: 1,
		noHandleSignals: true, pollInterval: 1000,
		logger: new gw.Logger(() => () => {}),
		taskList: { noop: async () => {} },
	});
	process.on("message", async (m) => {
		if (m === "stop") {
			await runner.stop();
			process.exit(0);
		}
	});
}

function boss() {
	const { PgBoss } = require("pg-boss");
	return new PgBoss({ connectionString: url, schema, supervise: false,
	    schedule: false, max: 2 });
}

async function pgbossAdd() {
	const b = boss();
	b.on("error", (e) => fail(e.message));
	await b.start();
	await b.createQueue("noop");
	for (let i = 0; i < jobs; i += 1000) {
		const batch = [];
		for (let k = i; k < Math.min(jobs, i + 1000); k++)
			batch.push({ data: { k } });
		await b.insert("noop", batch);
	}
	await b.stop({ graceful: false, wait: true });
}

async function pgbossWorker() {
	const b = boss();
	b.on("error", (e) => fail(e.message));
	await b.start({ migrate: false });
	await waitGo();
	for (;;) {
		const got = await b.fetch("noop");
		if (got.length === 0)
			break;
		await b.complete("noop", got[0]);
	}
	await b.stop({ graceful: false, wait: true });
	process.send("done", () => process.exit(0));
}

function waitGo() {
	return new Promise((resolve) => {
		process.on("message", (m) => { if (m === "go") resolve(); });
		process.send("ready");
	});
}

function startWorkers() {
	const kids = [];
	for (let i = 0; i < procs; i++)
		kids.push(fork(process.argv[1], [system, url, jobsArg, procsArg,
		    schema, "worker"], { env: process.env }));
	return kids;
}

function allSay(kids, what) {
	return Promise.all(kids.map((k) => new Promise((resolve, reject) => {
		const t = setTimeout(() => reject(new Error(`no "${what}" from a worker in ${DEADLINE_MS} ms`)), DEADLINE_MS);
		k.on("message", (m) => { if (m === what) { clearTimeout(t); resolve(); } });
		k.on("exit", (c) => { if (c !== 0) reject(new Error(`a worker exited ${c}`)); });
	})));
}

async function parent() {
	await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
	if (system === "graphile")
		await graphileAdd();
	else
		await pgbossAdd();
	const watch = new pg.Client({ connectionString: url });
	await watch.connect();
	const kids = startWorkers();
	await allSay(kids, "ready");
	const t0 = process.hrtime.bigint();
	kids.forEach((k) => k.send("go"));
	if (system === "graphile") {
		const until = Date.now() + DEADLINE_MS;
		while ((await graphileLeft(watch)) > 0) {
			if (Date.now() > until)
				fail(`jobs left after ${DEADLINE_MS} ms`);
			await new Promise((r) => setTimeout(r, 10));
		}
	} else
		await allSay(kids, "done");
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	await watch.end();
	// pg-boss's workers end by themselves once fetch finds nothing.
	if (system === "graphile")
		kids.forEach((k) => k.send("stop", () => {}));
	if (system === "pgboss") {
		const r = await sql(`SELECT count(*)::int AS n FROM ${schema}.job WHERE state <> 'completed'`);
		if (r.rows[0].n !== 0)
			fail(`${r.rows[0].n} jobs not completed`);
	}
	await Promise.all(kids.map((k) => new Promise((r) => k.exitCode !== null ? r() : k.on("exit", r))));
	await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
	console.log(`${system} ${procs} ${jobs} ${s.toFixed(3)} ${(jobs / s).toFixed(0)}`);
}

if (!["graphile", "pgboss"].includes(system) || !(jobs > 0) || !(procs > 0))
	fail("usage: node queue_compare.mjs graphile|pgboss URL JOBS PROCS SCHEMA");
const main = process.argv[7] === "worker" ?
    (system === "graphile" ? graphileWorker : pgbossWorker) : parent;
main().catch((e) => fail(e.stack ?? String(e)));
