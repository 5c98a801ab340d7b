// How long tests wait for what a busy machine makes slow, in one place. These are ceilings on waits for events
// (a line, a state), so a quiet run never waits them out; they only decide when a test gives up.
//
// Starting a warren process is CPU-bound (Node strips the types of a few hundred modules and imports them: about
// 2 s of CPU). With both cores busy (two other processes and three test workers) it took over 15 s, the old
// ceiling, in one run in three: the cause of most failures on a loaded machine.

/** A warren (or hub) process from spawn to its readiness line. */
export const PROCESS_START_MS = 60_000;

/** A test that starts one or more warren processes and waits for them: room for two starts and the work. */
export const PROCESS_TEST_MS = 180_000;
