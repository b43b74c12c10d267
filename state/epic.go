package state

import "time"

// Epic is the stored form of an epic: its features, how they depend on
// one another, the frozen paths of its current version, and the complete
// features that a version bump sent back to review.
type Epic struct {
	Format   int           `json:"format"`
	Name     string        `json:"name"`
	Version  int           `json:"version"`
	Features []EpicFeature `json:"features"`
	Frozen   []string      `json:"frozen"`
	// Review lists the features awaiting review, in epic order.
	Review []EpicReview `json:"review,omitempty"`
}

// EpicFeature is one feature of an epic.
type EpicFeature struct {
	Name             string   `json:"name"`
	Graph            string   `json:"graph"`
	Dependencies     []string `json:"dependencies,omitempty"`
	SoftDependencies []string `json:"soft_dependencies,omitempty"`
}

// EpicReview is a complete feature built against frozen paths that have
// changed since: it needs a person's look before it is trusted again.
type EpicReview struct {
	Feature string    `json:"feature"`
	Version int       `json:"version"` // the version that sent it back
	Since   time.Time `json:"since"`
}

// Feature returns the named feature, nil when the epic has none.
func (e *Epic) Feature(name string) *EpicFeature {
	for i := range e.Features {
		if e.Features[i].Name == name {
			return &e.Features[i]
		}
	}
	return nil
}

// NeedsReview returns the review record of a feature, nil when it needs
// none.
func (e *Epic) NeedsReview(feature string) *EpicReview {
	for i := range e.Review {
		if e.Review[i].Feature == feature {
			return &e.Review[i]
		}
	}
	return nil
}
