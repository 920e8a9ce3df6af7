/** The container runtime: the project's image, its own dockerd, the suite in a container. */
export { type BuildOptions, type BuildResult, buildImage } from './build.js';
export {
  type Daemon,
  type DaemonOptions,
  mountsUnder,
  type StopReport,
  startDaemon,
  stopDaemon,
  withDaemon,
} from './daemon.js';
export { DockerRuntimeError, type DockerStep } from './errors.js';
export { dataDisk, type Handover, type HandoverProduct, savedImage } from './handover.js';
export { type DockerPaths, dockerPaths, IMAGE_NAME, LOCAL_BASE_IMAGE } from './paths.js';
export {
  type ContainerMode,
  type DockerRunOptions,
  type DockerRunResult,
  dockerRun,
} from './run.js';
