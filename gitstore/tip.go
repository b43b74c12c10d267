package gitstore

import "github.com/go-git/go-git/v5/plumbing"

// Tip is the state commit the transaction read (zero when the feature
// does not exist): a check that the state was made or checked here must
// look at exactly what the transaction builds on, not at a later read.
func (tx *Tx) Tip() plumbing.Hash { return tx.featTip }
