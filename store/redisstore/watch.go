package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
)

// hub multiplexes every Watch of a Store onto one sharded pub/sub connection per
// Redis master: a channel is subscribed once however many local watchers it has, and
// each message is fanned out to them. Safe for concurrent use.
//
// Each shard has a writer goroutine (sends SSUBSCRIBE/SUNSUBSCRIBE in the order the
// hub queued them) and a reader goroutine (receives confirmations and messages).
// go-redis reconnects a dropped PubSub and resubscribes its channels by itself; the
// hub's part is to wake every watcher of a dropped connection, since saves made while
// it was down went unheard.
type hub struct {
	client  redis.UniversalClient
	cache   *cache               // the Store's (nil: none): takes the records messages carry
	cluster *redis.ClusterClient // nil unless client is a Cluster client
	opt     Options
	ctx     context.Context // ends at close; the loops run on it
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu     sync.Mutex
	closed bool
	shards map[string]*shard // by master address ("" on a single server)
	topics map[string]*topic // by channel
}

// topic is one subscribed channel and its local watchers.
type topic struct {
	name     string
	key      arbiter.SessionKey
	shard    *shard
	watchers map[chan struct{}]struct{}
	// ready is closed when Redis first confirms the subscription, or (err set) when
	// the first SSUBSCRIBE could not be sent.
	ready     chan struct{}
	err       error
	confirmed bool
	// live is false from a dropped connection until the resubscription is confirmed.
	live bool
}

// shard is one pub/sub connection to one master, bound to that master's address.
type shard struct {
	addr string
	node redis.UniversalClient // the master's own client (the store's client on a single server)
	ps   *redis.PubSub
	// pending counts SSUBSCRIBEs queued or sent whose confirmation has not arrived,
	// by channel, so that an old confirmation never vouches for a newer subscription.
	pending map[string]int
	queue   []op // SSUBSCRIBE/SUNSUBSCRIBE to send, in order
	kick    chan struct{}
	stop    chan struct{}
	stopped bool
}

var errClosed = errors.New("store closed")

type op struct {
	sub     bool
	channel string
}

func newHub(client redis.UniversalClient, opt Options, c *cache) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{client: client, cache: c, opt: opt, ctx: ctx, cancel: cancel, shards: map[string]*shard{}, topics: map[string]*topic{}}
	h.cluster, _ = client.(*redis.ClusterClient)
	return h
}

// route returns the master that owns channel's slot: its address ("" on a single
// server) and its client. On a Cluster it reads go-redis's cached slot map (loading it
// the first time).
func (h *hub) route(ctx context.Context, channel string) (string, redis.UniversalClient, error) {
	if h.cluster == nil {
		return "", h.client, nil
	}
	c, err := h.cluster.MasterForKey(ctx, channel)
	if err != nil {
		return "", nil, err
	}
	return c.Options().Addr, c, nil
}

func (h *hub) watch(ctx context.Context, key arbiter.SessionKey, name string) (<-chan struct{}, func(), error) {
	addr, node, err := h.route(ctx, name)
	if err != nil {
		return nil, nil, arbiter.Wrap(arbiter.Unavailable, err, "watch session %q: redis unavailable", key.ID)
	}
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, nil, arbiter.Errorf(arbiter.Unavailable, "watch session %q: store closed", key.ID)
	}
	t := h.topics[name]
	if t == nil {
		t = &topic{name: name, key: key, watchers: map[chan struct{}]struct{}{}, ready: make(chan struct{})}
		h.topics[name] = t
		h.attachLocked(t, h.shardLocked(addr, node))
	}
	t.watchers[ch] = struct{}{}
	ready := t.ready
	h.mu.Unlock()

	var once sync.Once
	stop := func() { once.Do(func() { h.unwatch(t, ch) }) }
	timer := time.NewTimer(h.opt.SubscribeTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		if t.err != nil {
			stop()
			return nil, nil, arbiter.Wrap(arbiter.Unavailable, t.err, "watch session %q: redis unavailable", key.ID)
		}
		return ch, stop, nil
	case <-timer.C:
		stop()
		return nil, nil, arbiter.Errorf(arbiter.Unavailable, "watch session %q: redis did not confirm the subscription within %v", key.ID, h.opt.SubscribeTimeout)
	case <-ctx.Done():
		stop()
		return nil, nil, arbiter.Wrap(arbiter.Unavailable, ctx.Err(), "watch session %q", key.ID)
	}
}

func (h *hub) unwatch(t *topic, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(t.watchers, ch)
	if len(t.watchers) > 0 || h.topics[t.name] != t {
		return
	}
	delete(h.topics, t.name)
	h.detachLocked(t)
}

// shardLocked returns the shard for addr, starting it if need be. A shard stays up
// while the store is open (one idle connection per master), so that long-polls that
// come and go do not redial; only a shard whose master lost its slots is stopped.
func (h *hub) shardLocked(addr string, node redis.UniversalClient) *shard {
	if s := h.shards[addr]; s != nil {
		return s
	}
	s := &shard{addr: addr, node: node, pending: map[string]int{}, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	// No channels yet: go-redis connects on the first SSUBSCRIBE.
	s.ps = node.SSubscribe(h.ctx)
	h.shards[addr] = s
	h.wg.Add(2)
	go h.writer(s)
	go h.reader(s)
	return s
}

// attachLocked subscribes t on s.
func (h *hub) attachLocked(t *topic, s *shard) {
	t.shard = s
	s.pending[t.name]++
	s.enqueueLocked(op{sub: true, channel: t.name})
}

// detachLocked unsubscribes t from its shard.
func (h *hub) detachLocked(t *topic) {
	s := t.shard
	t.shard = nil
	s.enqueueLocked(op{sub: false, channel: t.name})
}

func (h *hub) stopShardLocked(s *shard) {
	if s.stopped {
		return
	}
	s.stopped = true
	close(s.stop)
	if h.shards[s.addr] == s {
		delete(h.shards, s.addr)
	}
}

func (s *shard) enqueueLocked(o op) {
	s.queue = append(s.queue, o)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// writer sends the shard's queued SSUBSCRIBE/SUNSUBSCRIBE commands in order, and
// closes the PubSub when the shard stops. A command that cannot be sent is not lost:
// go-redis resubscribes every channel it was asked for when it reconnects. A first
// SSUBSCRIBE that cannot be sent fails its topic's waiting watchers at once (Redis is
// down: a confirmation will not come soon).
func (h *hub) writer(s *shard) {
	defer h.wg.Done()
	defer func() { _ = s.ps.Close() }() // also ends the reader's blocking receive
	for {
		select {
		case <-s.kick:
		case <-s.stop:
			return
		case <-h.ctx.Done():
			return
		}
		h.mu.Lock()
		ops := s.queue
		s.queue = nil
		h.mu.Unlock()
		for _, o := range ops {
			ctx, cancel := context.WithTimeout(h.ctx, h.opt.SubscribeTimeout)
			var err error
			if o.sub {
				err = s.ps.SSubscribe(ctx, o.channel)
			} else {
				err = s.ps.SUnsubscribe(ctx, o.channel)
			}
			cancel()
			if err != nil && o.sub {
				h.subscribeFailed(s, o.channel, err)
			}
		}
	}
}

// subscribeFailed fails the watchers still waiting for channel's first confirmation.
func (h *hub) subscribeFailed(s *shard, channel string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := s.pending[channel]; n > 1 {
		s.pending[channel] = n - 1
	} else {
		delete(s.pending, channel)
	}
	t := h.topics[channel]
	if t == nil || t.shard != s || t.confirmed {
		return
	}
	t.err = err
	close(t.ready)
	delete(h.topics, channel)
	h.detachLocked(t)
}

// reader receives the shard's messages and wakes watchers. On a dropped connection
// it wakes every watcher of the shard and lets go-redis reconnect, backing off. A
// connection silent for HealthCheckInterval is pinged; a ping left unanswered for
// another interval counts as a drop (watchers woken), but the socket itself is only
// replaced once writing to it fails, as go-redis's PubSub has no public reconnect.
func (h *hub) reader(s *shard) {
	defer h.wg.Done()
	const minBackoff = 50 * time.Millisecond
	backoff := minBackoff
	pinged := false
	for {
		msg, err := s.ps.ReceiveTimeout(h.ctx, h.opt.HealthCheckInterval)
		select {
		case <-s.stop:
			return
		case <-h.ctx.Done():
			return
		default:
		}
		if err != nil {
			var nerr net.Error
			timeout := errors.As(err, &nerr) && nerr.Timeout()
			if timeout && !pinged {
				pinged = true
				_ = s.ps.Ping(h.ctx)
				continue
			}
			if timeout {
				// The ping went unanswered: the connection is dead without knowing it.
				// A ping that cannot be written makes go-redis reconnect; one that can
				// (a half-open socket) is caught again by the next timeout.
				_ = s.ps.Ping(h.ctx)
			}
			pinged = false
			var rerr redis.Error
			h.dropped(s, errors.As(err, &rerr) && !timeout)
			select {
			case <-time.After(backoff):
			case <-s.stop:
				return
			case <-h.ctx.Done():
				return
			}
			if backoff *= 2; backoff > time.Second {
				backoff = time.Second
			}
			continue
		}
		backoff, pinged = minBackoff, false
		switch m := msg.(type) {
		case *redis.Message:
			h.message(s, m)
		case *redis.Subscription:
			h.subscription(s, m)
		}
	}
}

// message handles a wake-up message on s: the record it carries (if any, see
// wakeMessage) goes to the local cache first (cache.offer decides whether it is newer
// than the cached copy), then the channel's watchers wake, so that what they read
// next is at least that record. The cache is offered outside the hub's lock.
func (h *hub) message(s *shard, m *redis.Message) {
	h.mu.Lock()
	t := h.topics[m.Channel]
	if t == nil || t.shard != s {
		h.mu.Unlock()
		return
	}
	key := t.key
	h.mu.Unlock()
	if h.cache != nil {
		if version, life, rec, ok := wakeMessage(m.Payload); ok {
			h.cache.offer(key, version, life, rec)
		}
	}
	h.mu.Lock()
	if t := h.topics[m.Channel]; t != nil && t.shard == s {
		t.wakeLocked()
	}
	h.mu.Unlock()
}

// wakeMessage parses a wake-up message: "VERSION" (versions before the record rode
// along) or "VERSION:LIFETIME:RECORD", the shape of a stored record (parseRecord),
// RECORD possibly empty (rec nil: not sent). ok is false for anything else, which
// still wakes the watchers.
func wakeMessage(p string) (version uint64, life string, rec []byte, ok bool) {
	if !strings.Contains(p, ":") {
		version, err := strconv.ParseUint(p, 10, 64)
		return version, "", nil, err == nil
	}
	version, life, data, ok := parseRecord(p) // the shape of a stored record
	if !ok {
		return 0, "", nil, false
	}
	if data != "" {
		rec = []byte(data)
	}
	return version, life, rec, true
}

// subscription handles a subscription confirmation or a server-side unsubscribe.
func (h *hub) subscription(s *shard, m *redis.Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[m.Channel]
	switch m.Kind {
	case "ssubscribe":
		if n := s.pending[m.Channel]; n > 1 {
			s.pending[m.Channel] = n - 1
			return
		}
		delete(s.pending, m.Channel)
		if t == nil || t.shard != s {
			return
		}
		if !t.confirmed {
			t.confirmed, t.live = true, true
			close(t.ready)
			return
		}
		if !t.live {
			// Resubscribed after a drop: what happened meanwhile was not heard.
			t.live = true
			h.cache.drop(t.key)
			t.wakeLocked()
		}
	case "sunsubscribe":
		if t == nil || t.shard != s || s.pending[m.Channel] > 0 {
			return // our own unsubscribe, or a resubscription is on its way
		}
		// Redis unsubscribed us itself: the slot moved to another master.
		t.live = false
		h.cache.drop(t.key)
		t.wakeLocked()
		h.rerouteLocked(s, true)
	}
}

// dropped wakes every watcher of s (a save may have gone unheard, so the cached copies
// of their sessions are dropped too: a woken Decide reads the record) and, on a Cluster,
// re-routes its channels to the slots' current owners. replied is set when Redis
// answered with an error (MOVED: the slot moved).
func (h *hub) dropped(s *shard, replied bool) {
	if h.cluster != nil {
		h.cluster.ReloadState(h.ctx) // lazy: the next routing after it sees the new map
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(s.pending) // confirmations for the old connection will not come
	for _, t := range h.topics {
		if t.shard == s {
			t.live = false
			h.cache.drop(t.key)
			t.wakeLocked()
		}
	}
	h.rerouteLocked(s, replied)
}

// rerouteLocked moves the topics of s whose slot another master now owns to that
// master's shard, and stops s when it has none left. With resubscribe set, topics
// that stay are subscribed again (Redis refused or dropped them). No I/O unless the
// slot map was never loaded.
func (h *hub) rerouteLocked(s *shard, resubscribe bool) {
	if h.cluster == nil {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, 100*time.Millisecond)
	defer cancel()
	left := 0
	for _, t := range h.topics {
		if t.shard != s {
			continue
		}
		addr, node, err := h.route(ctx, t.name)
		if err != nil || addr == s.addr {
			left++
			if err == nil && resubscribe {
				s.pending[t.name]++
				s.enqueueLocked(op{sub: true, channel: t.name})
			}
			continue
		}
		h.detachLocked(t)
		t.live = false
		h.attachLocked(t, h.shardLocked(addr, node))
	}
	if left == 0 {
		h.stopShardLocked(s)
	}
}

// wakeLocked sends a coalescing wake-up to every watcher.
func (t *topic) wakeLocked() {
	for ch := range t.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// close stops every shard and waits for the loops; it reports whether this call was
// the one that closed.
func (h *hub) close() bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.closed = true
	for _, s := range h.shards {
		h.stopShardLocked(s)
	}
	for _, t := range h.topics {
		if !t.confirmed && t.err == nil {
			t.err = errClosed
			close(t.ready)
		}
	}
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return true
}
