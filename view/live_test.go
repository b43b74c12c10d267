package view

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/engine"
)

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr     string
		public   bool
		loopback bool
		kind     engine.Kind // 0: no error
	}{
		{"127.0.0.1:0", false, true, 0},
		{"[::1]:8080", false, true, 0},
		{"localhost:0", false, true, 0},
		{"0.0.0.0:0", false, false, engine.Usage},
		{"0.0.0.0:0", true, false, 0},
		{":0", false, false, engine.Usage},
		{"nonsense", false, false, engine.Usage},
	} {
		loopback, err := CheckAddr(c.addr, c.public)
		var ee *engine.Error
		switch {
		case c.kind == 0 && (err != nil || loopback != c.loopback):
			t.Errorf("%s public=%v: %v %v", c.addr, c.public, loopback, err)
		case c.kind != 0 && (!errors.As(err, &ee) || ee.Kind != c.kind):
			t.Errorf("%s public=%v: %v, want kind %d", c.addr, c.public, err, c.kind)
		}
	}
}

// Without an interval a syncer never opens anything; a negative one is
// refused before anything is read.
func TestSyncerInterval(t *testing.T) {
	y := &Syncer{Interval: -time.Second}
	var ee *engine.Error
	if err := y.Check(); !errors.As(err, &ee) || ee.Kind != engine.Usage {
		t.Fatalf("negative: %v", err)
	}
	y.Interval = 0
	if err := y.Check(); err != nil {
		t.Fatal(err)
	}
	y.Every(context.Background(), func(err error) { t.Errorf("reported %v without an interval", err) })
}
