/**
 * A recording's file name (`recording.start`'s `file_name`): the one rule, shared by the media
 * bridge that names the file and the gateway's recording routes that read the name back from a
 * URL (protocols/gateway/recording-paths.ts). A plain name: letters, digits, '.', '_', '-', not
 * starting with '.', at most 200 characters — so it can never climb out of its session's folder.
 * Pure.
 */
export const RECORDING_FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
