/** The client's own version (semver); keep in step with package.json. */
export const VERSION = "0.1.0";

/** The API version this client speaks: the protobuf package of its stubs. */
export { protobufPackage as API_VERSION } from "./gen/arbiter/v1/arbiter.js";
