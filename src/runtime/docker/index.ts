/** The container runtime: the project's image, its own dockerd, the suite in a container. */

export { type ContainerStep, RuntimeError } from '../errors.js';
export { type BuildOptions, type BuildResult, buildImage } from './build.js';
export {
  type Daemon,
  type DaemonOptions,
  dockerdProgram,
  mountsUnder,
  type StopReport,
  startDaemon,
  stopDaemon,
  withDaemon,
} from './daemon.js';
export {
  DEFAULT_HANDOVER,
  dataDisk,
  HANDOVERS,
  type Handover,
  type HandoverProduct,
  handoverFromEnvironment,
  savedImage,
} from './handover.js';
export { type DockerPaths, dockerPaths, IMAGE_NAME, LOCAL_BASE_IMAGE } from './paths.js';
export {
  type ContainerMode,
  type DockerRunOptions,
  type DockerRunResult,
  dockerRun,
} from './run.js';
