/** Reading zips in tests (yauzl): every entry's name and bytes. */
import { fromBuffer } from "yauzl";

/** Unzips a buffer: entry name → bytes, in the zip's order. */
export function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err);
      const out = new Map<string, Buffer>();
      file.on("entry", (entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const pieces: Buffer[] = [];
          stream.on("data", (p: Buffer) => pieces.push(p));
          stream.on("end", () => {
            out.set(entry.fileName, Buffer.concat(pieces));
            file.readEntry();
          });
          stream.on("error", reject);
        });
      });
      file.on("end", () => resolve(out));
      file.on("error", reject);
      file.readEntry();
    });
  });
}
