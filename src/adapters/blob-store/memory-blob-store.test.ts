import { runBlobStoreContract } from "./blob-store.contract.js";
import { MemoryBlobStore } from "./memory-blob-store.js";

runBlobStoreContract("memory", async () => {
  const store = new MemoryBlobStore();
  return { store, cleanup: () => store.close() };
});
