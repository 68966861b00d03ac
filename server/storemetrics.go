package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voicearbiter/arbiter/arbiter"
)

// InstrumentStore returns st counting every Load, Save and Watch in m
// (arbiter_store_requests_total by op and result, arbiter_store_request_seconds by op):
// the store round trips the Service makes and the compare-and-set conflicts it loses
// (op save, result conflict; each one is a retry of the step). Ping and Close pass
// through uncounted (the health loop pings). With a nil m it returns st itself.
func InstrumentStore(st arbiter.Store, m *Metrics) arbiter.Store {
	if m == nil {
		return st
	}
	is := &instrumentedStore{Store: st}
	for i, op := range []string{"load", "save", "watch"} {
		is.ops[i] = storeOp{time: m.storeTime.WithLabelValues(op)}
		for r, name := range storeResults {
			is.ops[i].results[r] = m.storeOps.WithLabelValues(op, name)
		}
	}
	return is
}

// storeResults are the result label's values, by the index resultOf gives.
var storeResults = [...]string{"ok", "not_found", "conflict", "unavailable", "error"}

// resultOf is err's index in storeResults.
func resultOf(err error) int {
	if err == nil {
		return 0
	}
	switch arbiter.KindOf(err) {
	case arbiter.NotFound:
		return 1
	case arbiter.Conflict:
		return 2
	case arbiter.Unavailable:
		return 3
	}
	return 4
}

// instrumentedStore is InstrumentStore's wrapper; its series are resolved once, so
// counting costs no label lookup.
type instrumentedStore struct {
	arbiter.Store
	ops [3]storeOp // load, save, watch
}

type storeOp struct {
	time    prometheus.Observer
	results [len(storeResults)]prometheus.Counter
}

func (o *storeOp) done(began time.Time, err error) {
	o.time.Observe(time.Since(began).Seconds())
	o.results[resultOf(err)].Inc()
}

func (s *instrumentedStore) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	began := time.Now()
	sess, err := s.Store.Load(ctx, key)
	s.ops[0].done(began, err)
	return sess, err
}

func (s *instrumentedStore) Save(ctx context.Context, sess *arbiter.Session, ttl time.Duration) error {
	began := time.Now()
	err := s.Store.Save(ctx, sess, ttl)
	s.ops[1].done(began, err)
	return err
}

func (s *instrumentedStore) Watch(ctx context.Context, key arbiter.SessionKey) (<-chan struct{}, func(), error) {
	began := time.Now()
	ch, stop, err := s.Store.Watch(ctx, key)
	s.ops[2].done(began, err)
	return ch, stop, err
}
