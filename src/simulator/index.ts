// Simulated nodes: many Nodes whose agent is this one process (see simulator.ts).

export { NodeSimulator, type SimulatorOptions, type SimulatorStats } from "./simulator.js";
export { parseStages, DEFAULT_STAGES, SUCCEED_AFTER_ANNOTATION, type Stage, type Stages } from "./stages.js";
export { MAX_NODES, type NodeShape } from "./objects.js";
export { WriteQueue, type WriteQueueOptions } from "./write-queue.js";
