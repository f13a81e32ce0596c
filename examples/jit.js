// jit: a Node.js workload whose hot function exists only as JIT code.
// Run it with `node --perf-basic-prof examples/jit.js SECONDS`; V8 then
// writes /tmp/perf-PID.map, which names hotJitFunction for the profiler.
'use strict';

function hotJitFunction(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x * 31 + i) % 1000003;
	return x;
}

const seconds = Number(process.argv[2] || 6);
const end = Date.now() + seconds * 1000;
let sink = 0;
while (Date.now() < end)
	sink += hotJitFunction(100000);
console.log(sink % 2);
