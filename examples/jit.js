// jit: a Node.js workload whose hot function exists only as JIT code.
// Run it with `node --perf-basic-prof examples/jit.js SECONDS`; V8 then
// writes /tmp/perf-PID.map, which names hotJitFunction for the profiler.
//
// hotJitFunction runs for a whole second per call, so V8 compiles it on
// the stack (OSR) as its own code object. Were it called in a tight loop,
// V8 would inline it into the caller and its name would vanish from the
// map, as it does for any inlined JS function.
'use strict';

function hotJitFunction(seconds) {
	const end = Date.now() + seconds * 1000;
	let x = 0;
	while (Date.now() < end) {
		for (let i = 0; i < 100000; i++)
			x = (x * 31 + i) % 1000003;
	}
	return x;
}

const seconds = Number(process.argv[2] || 6);
let sink = 0;
for (let s = 0; s < seconds; s++)
	sink += hotJitFunction(1);
console.log(sink % 2);
