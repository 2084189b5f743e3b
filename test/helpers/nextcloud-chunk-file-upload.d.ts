/** The part of nextcloud-chunk-file-upload 1.1 (no types of its own) that its client test uses. */
declare module 'nextcloud-chunk-file-upload' {
  /** What uploadFile resolves or rejects with (dist/event.js). */
  interface UploadEvent {
    filename: string;
    chunkNo: number | null;
    message: string | null;
    complete: boolean;
    httpErrorCode: number | null;
    httpErrorMessage: unknown;
  }
  export default class Upload {
    /** `url` ends in /remote.php/dav; `userspace` is the user's name in the URLs. */
    constructor(url: string, userspace: string, username: string, password: string);
    uploadFile(localPath: string, remotePath: string, chunkSize?: number, retryChunks?: number): Promise<UploadEvent>;
  }
}
