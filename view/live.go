package view

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
)

// Syncer is the background sync of watch --sync and serve --sync: a view of
// a rush on another host fetches its state at each Interval.
type Syncer struct {
	Store    func() (*gitstore.Store, error)
	Config   func() (*config.Config, error)
	Now      func() time.Time
	Interval time.Duration // none when 0
	Remote   string
}

// Check refuses a negative interval before anything is read.
func (y *Syncer) Check() error {
	if y.Interval < 0 {
		return &engine.Error{Kind: engine.Usage, What: "--sync must not be negative"}
	}
	return nil
}

// engine works on a store of its own so the view's reads never wait for a
// fetch.
func (y *Syncer) engine(ctx context.Context) (*engine.Engine, error) {
	cfg, err := y.Config()
	if err != nil {
		return nil, err
	}
	s, err := y.Store()
	if err != nil {
		return nil, err
	}
	return engine.BackgroundSync(ctx, s, cfg, y.Now)
}

// Once syncs now, for a view that shows the state as the remote has it.
func (y *Syncer) Once(ctx context.Context) error {
	g, err := y.engine(ctx)
	if err != nil {
		return err
	}
	_, err = g.Sync(y.Remote, 5)
	return err
}

// Every syncs at each Interval until ctx ends, reporting each round's
// error (nil for a good one); without an interval it returns at once.
func (y *Syncer) Every(ctx context.Context, report func(error)) {
	if y.Interval <= 0 {
		return
	}
	g, err := y.engine(ctx)
	if err != nil {
		report(err)
		return
	}
	syncEvery(ctx, y.Interval, func() error {
		_, err := g.Sync(y.Remote, 5)
		return err
	}, report)
}

// Live runs watch until ctx ends or the user quits: full-screen when
// stdout is a terminal and there is a keyboard, else the state printed
// again at each change. Failed background syncs go to warn when there is
// no screen to show them on.
func Live(ctx context.Context, src *Source, feature string, stdin io.Reader, stdout io.Writer, isTTY bool, y *Syncer, warn func(error)) error {
	out, _ := stdout.(*os.File)
	in := keyboard(stdin)
	if !isTTY || out == nil || in == nil {
		go y.Every(ctx, func(err error) {
			if err != nil {
				warn(err)
			}
		})
		return runPlain(ctx, src, feature, stdout)
	}
	if in != os.Stdin {
		defer in.Close()
	}
	w := newWatch(src, feature)
	// The view reads its sync outcome when it draws; the store it reads
	// with is not the one sync writes with.
	syncs := make(chan error, 1)
	go y.Every(ctx, func(err error) {
		select {
		case syncs <- err:
		default:
		}
	})
	return w.Run(ctx, in, out, syncs)
}

// SyncWith shows the outcome of each of y's rounds on the page; warn is
// told of each that failed.
func (sv *Server) SyncWith(ctx context.Context, y *Syncer, warn func(error)) {
	go y.Every(ctx, func(err error) {
		sv.SetSync(err, y.Now())
		if err != nil {
			warn(err)
		}
	})
}

// CheckAddr refuses an address serve cannot listen on, and one other
// machines could reach unless public; it tells whether addr is loopback.
func CheckAddr(addr string, public bool) (loopback bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("bad --addr %q (%v)", addr, err)}
	}
	loopback = host != "" && loopbackHost(host)
	if !loopback && !public {
		return false, &engine.Error{Kind: engine.Usage, What: "serve: " + addr + " is not a loopback address",
			Why:  "every machine that reaches it could read the state and the workers' output",
			Hint: "give --public to serve it anyway, or --addr 127.0.0.1:PORT"}
	}
	return loopback, nil
}
