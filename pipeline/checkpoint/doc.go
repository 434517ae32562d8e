// Package checkpoint keeps the checkpoint directory of a distributed step
// (its ranks' PIPECTL_CHECKPOINT_DIR) in the artifact store, so that a
// gang restart, a retry of the step and a rerun of the run start from the
// last checkpoint, not from scratch.
//
// A Keeper syncs the directory to the store as numbered generations,
// <run>/<step>/.checkpoint/<generation>/<file>, each complete once its
// manifest <run>/<step>/.checkpoint/<generation>.json exists (written
// last, exclusively): a sync cut short leaves no manifest and is never
// restored. Restore makes the directory the latest complete generation
// (this run's, else the run it resumes from). Only the latest Keep
// generations stay in the store.
package checkpoint
