import type { Container } from "../app/container.js";
import type { Output } from "./admin.js";
import type { CommandFlags } from "./commands.js";

/**
 * `ferry keys rotate`: adds a new master key to the key file and makes it active, then re-wraps
 * every media data key under the new KEK (blobs are not touched). With FERRY_MASTER_KEY the ring
 * cannot be changed from here: put the new key first in that variable, then run this command to
 * re-wrap the data keys under it. Exit code 0.
 */
export async function keysRotateCommand(
  container: Container,
  out: Output,
  _flags: CommandFlags,
): Promise<number> {
  let rotated = true;
  let kid: string;
  try {
    kid = container.keyRing.rotate();
  } catch {
    // A ring from FERRY_MASTER_KEY: the operator rotates by editing the variable.
    rotated = false;
    kid = container.keyRing.activeKid;
  }
  const rewrapped = await container.media.storage.rewrapDataKeys();
  out.print(
    { active_kid: kid, rotated, rewrapped_data_keys: rewrapped },
    [
      rotated
        ? `New active key: ${kid}`
        : `The key ring comes from FERRY_MASTER_KEY: no key added (put a new 'kid:key' first in it to rotate). Active key: ${kid}`,
      `Re-wrapped ${rewrapped} media data key(s) under ${kid}; no blob was rewritten.`,
      rotated
        ? "Running servers pick the new key up on restart; until then they keep wrapping new keys under the previous one, which stays in the ring."
        : "",
    ]
      .filter(Boolean)
      .join("\n"),
  );
  return 0;
}
