package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/store/redisstore"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// TestConformance runs the store conformance suite (contract and every golden
// scenario) on a real redis-server, flushed before each test, without and with the
// local cache.
func TestConformance(t *testing.T) {
	t.Run("NoCache", func(t *testing.T) { conformance(t, redisstore.Options{}) })
	t.Run("Cache", func(t *testing.T) { conformance(t, redisstore.Options{CacheSessions: 64}) })
	// The hash layout and FormatProto records of versions before 2026-12-01.
	t.Run("LegacyRecords", func(t *testing.T) { conformance(t, redisstore.Options{CacheSessions: 64, LegacyRecords: true}) })
	// A primary with a replica, every write and answered read waiting for it (WAIT).
	t.Run("ReplicaAcks", func(t *testing.T) {
		conformance(t, redisstore.Options{CacheSessions: 64, ReplicaAcks: 1}, func(srv *redistest.Server) { redistest.StartReplica(t, srv) })
	})
}

func conformance(t *testing.T, opt redisstore.Options, with ...func(*redistest.Server)) {
	srv := redistest.Start(t)
	for _, f := range with {
		f(srv)
	}
	storetest.Run(t, "../..", func(t *testing.T, _ func() time.Time) arbiter.Store {
		st, err := redisstore.Open(srv.URL(), opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if err := st.Client().FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestClusterConformance runs the same suite on a three-master Redis Cluster.
func TestClusterConformance(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	storetest.Run(t, "../..", func(t *testing.T, _ func() time.Time) arbiter.Store {
		st, err := redisstore.Open(cl.URL(), redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		cc, ok := st.Client().(*redis.ClusterClient)
		if !ok {
			t.Fatalf("client for %s is a %T, want a cluster client", cl.URL(), st.Client())
		}
		err = cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
			return c.FlushDB(ctx).Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
	t.Run("SessionsSpreadOverShards", func(t *testing.T) {
		// Watches on sessions owned by different masters each wake on their own save.
		st, err := redisstore.Open(cl.URL(), redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		cc := st.Client().(*redis.ClusterClient)
		owners := map[string]bool{}
		var keys []arbiter.SessionKey
		for i := 0; len(owners) < 3 && i < 1000; i++ {
			k := arbiter.SessionKey{ID: fmt.Sprintf("spread-%d", i)}
			m, err := cc.MasterForKey(ctx, redisstore.Key(k))
			if err != nil {
				t.Fatal(err)
			}
			if !owners[m.Options().Addr] {
				owners[m.Options().Addr] = true
				keys = append(keys, k)
			}
		}
		if len(keys) != 3 {
			t.Fatalf("sessions on %d masters, want 3", len(keys))
		}
		for _, k := range keys {
			ch, stop, err := st.Watch(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Save(ctx, arbiter.NewSession(k, time.Now()), time.Minute); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ch:
			case <-time.After(2 * time.Second):
				t.Fatalf("session %s: no wake-up", k.ID)
			}
			stop()
		}
	})
}

func TestKeyIsOneToOne(t *testing.T) {
	cases := []arbiter.SessionKey{
		{Tenant: "a:b", ID: "c"}, {Tenant: "a", ID: "b:c"}, {Tenant: "", ID: "a:b:c"},
		{Tenant: "x}", ID: "y"}, {Tenant: "x", ID: "}y"}, {Tenant: "%7D", ID: "y"},
	}
	seen := map[string]arbiter.SessionKey{}
	for _, k := range cases {
		key := redisstore.Key(k)
		if prev, ok := seen[key]; ok {
			t.Fatalf("%+v and %+v both map to %s", prev, k, key)
		}
		seen[key] = k
	}
	if got := redisstore.Key(arbiter.SessionKey{Tenant: "t1", ID: "s-1.x:y"}); got != "arb:{t1:s-1.x:y}" {
		t.Fatalf("Key = %s", got)
	}
}

func TestURLForms(t *testing.T) {
	cases := []struct {
		url  string
		kind string
	}{
		{"redis://127.0.0.1:7000", "*redis.Client"},
		{"rediss://:secret@127.0.0.1:7000/2", "*redis.Client"},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", "*redis.ClusterClient"},
		{"redis://127.0.0.1:7000,redis://127.0.0.1:7001", "*redis.ClusterClient"},
		{"redis://127.0.0.1:7000?cluster=true", "*redis.ClusterClient"},
		{"redis://127.0.0.1:26379?master_name=mymaster", "*redis.Client"},
	}
	for _, c := range cases {
		cl, err := redisstore.NewClient(c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if got := fmt.Sprintf("%T", cl); got != c.kind {
			t.Errorf("%s: %s, want %s", c.url, got, c.kind)
		}
		_ = cl.Close()
	}
	for _, bad := range []string{"", "http://x:1", "redis://x:1?nonsense=1", "redis://h:1/notadb"} {
		if _, err := redisstore.NewClient(bad); arbiter.KindOf(err) != arbiter.Invalid {
			t.Errorf("%q: %v, want Invalid", bad, err)
		}
	}
	if got := redisstore.Redact("redis://u:secret@h:1?password=p2,redis://h2:2"); got != "redis://u:xxxxx@h:1?password=xxxxx,redis://h2:2" {
		t.Errorf("Redact = %s", got)
	}
}

// TestUnavailable checks that a store on a Redis that is not there fails closed, fast,
// with Unavailable, and recovers when the server comes back.
func TestUnavailableAndRecovery(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{SubscribeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "down"}
	ch, stop, err := st.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := arbiter.NewSession(key, time.Now())
	if err := st.Save(ctx, s, time.Minute); err != nil {
		t.Fatal(err)
	}
	<-ch
	srv.Kill()
	select {
	case <-ch: // the dropped pub/sub connection woke the watcher
	case <-time.After(3 * time.Second):
		t.Fatal("watcher not woken when the pub/sub connection dropped")
	}
	// Failing must be prompt, not a hang: each call gets 5 s, and one that runs out
	// answers DeadlineExceeded (a context error), not Unavailable.
	down, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ctx = down
	if _, err := st.Load(ctx, key); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Load with redis down: %v, want Unavailable", err)
	}
	if err := st.Save(ctx, s, time.Minute); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Save with redis down: %v, want Unavailable", err)
	}
	if err := st.Ping(ctx); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Ping with redis down: %v, want Unavailable", err)
	}
	if _, _, err := st.Watch(ctx, arbiter.SessionKey{ID: "other"}); arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("Watch with redis down: %v, want Unavailable", err)
	}
	ctx = context.Background()
	srv.Restart() // no persistence: the session is gone, the store works again
	deadline := time.Now().Add(5 * time.Second)
	for st.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("store did not recover after redis came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := st.Load(ctx, key); arbiter.KindOf(err) != arbiter.NotFound {
		t.Fatalf("Load after restart: %v, want NotFound", err)
	}
	// The old watch was resubscribed: a save wakes it again.
	for len(ch) > 0 {
		<-ch
	}
	waitFor := func(what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: no wake-up", what)
		}
	}
	deadline = time.Now().Add(3 * time.Second)
	for {
		// The resubscription may land a moment after PING works again.
		s2 := arbiter.NewSession(key, time.Now())
		if err := st.Save(ctx, s2, time.Minute); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("old watch never woke after redis came back")
			}
			_, _ = st.Client().Del(ctx, redisstore.Key(key)).Result()
			continue
		}
		break
	}
	s3, err := st.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, s3, time.Minute); err != nil {
		t.Fatal(err)
	}
	waitFor("save after recovery")
}

func TestMalformedRecordIsInternal(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "bad"}
	for _, fields := range [][]any{{"v", "1", "d", "{not json"}, {"v", "x", "d", "{}"}, {"d", "{}"}} {
		st.Client().Del(ctx, redisstore.Key(key))
		st.Client().HSet(ctx, redisstore.Key(key), fields...)
		if _, err := st.Load(ctx, key); arbiter.KindOf(err) != arbiter.Internal {
			t.Errorf("record %v: %v, want Internal", fields, err)
		}
	}
	for _, val := range []string{"a string", "7:1:{not json", "x:1:{}", "7:x:{}", "7:{}", ":1:{}", "7::{}", "1:2:"} {
		st.Client().Del(ctx, redisstore.Key(key))
		st.Client().Set(ctx, redisstore.Key(key), val, 0)
		if _, err := st.Load(ctx, key); arbiter.KindOf(err) != arbiter.Internal {
			t.Errorf("string %q at the key: %v, want Internal", val, err)
		}
	}
	for _, val := range []string{"a string", "7:{}"} {
		st.Client().Set(ctx, redisstore.Key(key), val, 0)
		s := arbiter.NewSession(key, time.Now())
		s.Version = 7
		if err := st.Save(ctx, s, time.Minute); arbiter.KindOf(err) != arbiter.Internal {
			t.Errorf("save over the string %q: %v, want Internal", val, err)
		}
	}
	st.Client().Del(ctx, redisstore.Key(key))
	st.Client().RPush(ctx, redisstore.Key(key), "a list")
	if _, err := st.Load(ctx, key); arbiter.KindOf(err) != arbiter.Internal {
		t.Errorf("a list at the key: %v, want Internal", err)
	}
	if err := st.Save(ctx, arbiter.NewSession(key, time.Now()), time.Minute); arbiter.KindOf(err) != arbiter.Internal {
		t.Errorf("save over a list: %v, want Internal", err)
	}
}

// TestRecordThatCannotBeTheSession: a record at a session's key that cannot be that
// session (another session's record copied there, version 0, a version Lua cannot
// compare exactly, a stored lifetime that is not the record's, a hash without a
// version) makes every request on the session fail with INTERNAL naming it, on a
// replica with and without a copy of it (so by the read, the compare-and-set, or a
// new session's blind create), in a short readable message; nothing is written, to
// that key or the other session's.
func TestRecordThatCannotBeTheSession(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	e := storetest.BenchEngine(t, "../..")
	svc := &arbiter.Service{Engine: e, Store: st, Clock: replay.NewVirtualClock(replay.Epoch)}
	rc := st.Client()
	good := arbiter.SessionKey{ID: "good"}
	if _, _, err := svc.Apply(ctx, good, arbiter.RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true); err != nil {
		t.Fatal(err)
	}
	val, err := rc.Get(ctx, redisstore.Key(good)).Result()
	if err != nil {
		t.Fatal(err)
	}
	version, life, rec, ok := redisstore.ParseRecord(val)
	if !ok {
		t.Fatalf("malformed record %q", val)
	}
	bad := arbiter.SessionKey{ID: "bad"}
	for _, tc := range []struct {
		name string
		set  func() error
	}{
		{"another session's record", func() error { return rc.Set(ctx, redisstore.Key(bad), val, 0).Err() }},
		{"version 0", func() error { return rc.Set(ctx, redisstore.Key(bad), "0:"+life+":"+rec, 0).Err() }},
		{"a version of 20 digits", func() error {
			return rc.Set(ctx, redisstore.Key(bad), "99999999999999999999:"+life+":"+rec, 0).Err()
		}},
		{"a stored lifetime not the record's", func() error {
			return rc.Set(ctx, redisstore.Key(bad), fmt.Sprintf("%d:-5:%s", version, rec), 0).Err()
		}},
		{"a hash without a version", func() error { return rc.HSet(ctx, redisstore.Key(bad), "d", rec).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc.Del(ctx, redisstore.Key(bad))
			if err := tc.set(); err != nil {
				t.Fatal(err)
			}
			before, _ := rc.Dump(ctx, redisstore.Key(bad)).Result()
			goodBefore, _ := rc.Get(ctx, redisstore.Key(good)).Result()
			check := func(what string, err error) {
				t.Helper()
				msg := arbiter.MessageOf(err)
				if arbiter.KindOf(err) != arbiter.Internal || !strings.Contains(msg, `"bad"`) || len(msg) > 200 || !utf8.ValidString(msg) {
					t.Errorf("%s: %v (%q), want INTERNAL naming session \"bad\" in a short message", what, err, msg)
				}
			}
			_, err := st.Load(ctx, bad)
			check("Load", err)
			// No copy here: RegisterCall tries a new session's blind create first.
			_, _, err = svc.Apply(ctx, bad, arbiter.RegisterCall{CallID: "c9", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}}, true)
			check("RegisterCall", err)
			_, _, err = svc.Apply(ctx, bad, arbiter.Speech{Kind: arbiter.UserActivityStart}, true)
			check("ReportSpeech", err)
			if after, _ := rc.Dump(ctx, redisstore.Key(bad)).Result(); after != before {
				t.Errorf("the record at the key changed")
			}
			if goodAfter, _ := rc.Get(ctx, redisstore.Key(good)).Result(); goodAfter != goodBefore {
				t.Errorf("session \"good\" changed")
			}
		})
	}
}

// TestWakeLatency measures how long a save on one store takes to wake a watcher on
// another (two replicas on one Redis).
func TestWakeLatency(t *testing.T) {
	srv := redistest.Start(t)
	a, _ := redisstore.Open(srv.URL(), redisstore.Options{})
	b, _ := redisstore.Open(srv.URL(), redisstore.Options{})
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "latency"}
	ch, stop, err := b.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := arbiter.NewSession(key, time.Now())
	const n = 200
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := a.Save(ctx, s, time.Minute); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(2 * time.Second):
			t.Fatalf("save %d: no wake-up within 2 s", i)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	p50, p99 := lat[n/2], lat[n*99/100]
	// Every save woke the other store (the check above); how fast is for benchmarks
	// (bench/), so the figures are only logged.
	t.Logf("save → wake on another store (save round trip included): median %v, p99 %v, worst %v over %d saves", p50, p99, lat[n-1], n)
}

// TestManyWatchersOneChannel checks the reference counting: watchers come and go on
// one session while saves go on, and every watcher still present wakes.
func TestManyWatchersOneChannel(t *testing.T) {
	srv := redistest.Start(t)
	st, _ := redisstore.Open(srv.URL(), redisstore.Options{})
	defer st.Close()
	ctx := context.Background()
	key := arbiter.SessionKey{ID: "many"}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				ch, stop, err := st.Watch(ctx, key)
				if err != nil {
					t.Error(err)
					return
				}
				for {
					s, err := st.Load(ctx, key)
					if arbiter.KindOf(err) == arbiter.NotFound {
						s, err = arbiter.NewSession(key, time.Now()), nil
					}
					if err != nil {
						t.Error(err)
						stop()
						return
					}
					if err := st.Save(ctx, s, time.Minute); err == nil {
						break
					}
				}
				select {
				case <-ch:
				case <-time.After(2 * time.Second):
					t.Error("no wake-up for a save made after Watch returned")
				}
				stop()
			}
		}()
	}
	wg.Wait()
}

// TestReadsJSONRecords: a record an older replica wrote (JSON in the hash layout,
// before the protobuf record) loads as the session it was, during a rolling upgrade,
// and the next Save rewrites it in the string layout as protobuf (FormatProtoS2) on
// the same compare-and-set version.
func TestReadsJSONRecords(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	e := storetest.BenchEngine(t, "../..")
	want := storetest.IdleSession(t, e, "old")
	old, err := arbiter.EncodeSession(want)
	if err != nil {
		t.Fatal(err)
	}
	st.Client().HSet(ctx, redisstore.Key(want.Key), "v", "7", "d", old)
	got, err := st.Load(ctx, want.Key)
	if err != nil {
		t.Fatal(err)
	}
	want.Version = 7
	got.Digest = "" // the store's fingerprint of the record, not the session's
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the JSON record loads as another session:\n got %+v\nwant %+v", got, want)
	}
	if err := st.Save(ctx, got, time.Hour); err != nil || got.Version != 8 {
		t.Fatalf("save: version %d, %v; want 8", got.Version, err)
	}
	val, err := st.Client().Get(ctx, redisstore.Key(want.Key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	v, _, d, ok := redisstore.ParseRecord(val)
	if !ok || v != 8 || d[0] != sessioncodec.FormatProtoS2 || len(d) >= len(old) {
		t.Fatalf("rewritten record: version %d, %d B starting 0x%02x (%v); want 8, the string layout, FormatProtoS2, under the JSON's %d B", v, len(d), d[0], ok, len(old))
	}
}

// TestJSONRecords: with Options.JSONRecords the store writes JSON records in the hash
// layout, which a replica of a version before the protobuf record (HMGET,
// arbiter.DecodeSession: JSON only) reads as the session it was, and still reads
// protobuf ones.
func TestJSONRecords(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(srv.URL(), redisstore.Options{JSONRecords: true, CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	e := storetest.BenchEngine(t, "../..")
	s := storetest.IdleSession(t, e, "json")
	s.Version = 0
	if err := st.Save(ctx, s, time.Hour); err != nil {
		t.Fatal(err)
	}
	d, err := st.Client().HGet(ctx, redisstore.Key(s.Key), "d").Result()
	if err != nil {
		t.Fatal(err)
	}
	old, err := arbiter.DecodeSession([]byte(d))
	if err != nil {
		t.Fatalf("an old replica cannot read the record: %v", err)
	}
	old.Version, old.Digest = s.Version, s.Digest
	if !reflect.DeepEqual(old, s) {
		t.Fatalf("an old replica reads another session:\n got %+v\nwant %+v", old, s)
	}
	rec, err := sessioncodec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	st.Client().HSet(ctx, redisstore.Key(s.Key), "d", rec)
	if got, err := st.Load(ctx, s.Key); err != nil || len(got.Calls) != 1 {
		t.Fatalf("a protobuf record: %v, %+v", err, got)
	}
}

// TestLegacyRecords: with Options.LegacyRecords the store writes the record a replica
// of a version before 2026-12-01 reads: the hash layout (v, d, c), d as
// sessioncodec.EncodeProto writes it (byte for byte what that version wrote:
// sessioncodec's golden records). A store without it reads that record, checks it
// with Current, and writes the string layout over it (FormatProtoS2); the legacy store
// reads that too, and its next save writes the hash layout again.
func TestLegacyRecords(t *testing.T) {
	srv := redistest.Start(t)
	legacy, err := redisstore.Open(srv.URL(), redisstore.Options{LegacyRecords: true, CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	st, err := redisstore.Open(srv.URL(), redisstore.Options{CacheSessions: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	e := storetest.BenchEngine(t, "../..")
	s := storetest.IdleSession(t, e, "legacy")
	s.Version = 0
	if err := legacy.Save(ctx, s, time.Hour); err != nil {
		t.Fatal(err)
	}
	want, err := sessioncodec.EncodeProto(s)
	if err != nil {
		t.Fatal(err)
	}
	key := redisstore.Key(s.Key)
	h, err := legacy.Client().HGetAll(ctx, key).Result()
	if err != nil || len(h) != 3 || h["v"] != "1" || h["d"] != string(want) || h["c"] != strconv.FormatInt(s.CreatedAt.UnixNano(), 10) {
		t.Fatalf("the legacy record is not the hash of version 1, EncodeProto's record and the lifetime (%v)", err)
	}
	got, err := st.Load(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("the legacy record loads as another session:\n got %+v\nwant %+v", got, s)
	}
	if ok, err := st.Current(ctx, got); !ok || err != nil {
		t.Fatalf("Current on the legacy record: %v, %v", ok, err)
	}
	if err := st.Save(ctx, got, time.Hour); err != nil || got.Version != 2 {
		t.Fatalf("save over the legacy record: version %d, %v", got.Version, err)
	}
	val, err := st.Client().Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if v, life, d, ok := redisstore.ParseRecord(val); !ok || v != 2 || life != h["c"] || d[0] != sessioncodec.FormatProtoS2 {
		t.Fatalf("the rewritten record: version %d, lifetime %s, format 0x%02x (%v); want 2, %s, FormatProtoS2", v, life, d[0], ok, h["c"])
	}
	if ttl := st.Client().PTTL(ctx, key).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the rewritten record's TTL: %v", ttl)
	}
	back, err := legacy.Load(ctx, s.Key)
	if err != nil || back.Version != 2 {
		t.Fatalf("the legacy store reads the string record: %v, %v", back, err)
	}
	if ok, err := legacy.Current(ctx, back); !ok || err != nil {
		t.Fatalf("Current of the legacy store on the string record: %v, %v", ok, err)
	}
	if err := legacy.Save(ctx, back, 0); err != nil || back.Version != 3 {
		t.Fatalf("legacy save over the string record: %v", err)
	}
	if typ := legacy.Client().Type(ctx, key).Val(); typ != "hash" || legacy.Client().PTTL(ctx, key).Val() != -1 {
		t.Fatalf("after the legacy save: a %s, TTL %v; want a hash without expiry", typ, legacy.Client().PTTL(ctx, key).Val())
	}
	// A stale copy loses on either layout, and the reply carries the current record.
	if err := st.Save(ctx, got, time.Hour); arbiter.KindOf(err) != arbiter.Conflict {
		t.Fatalf("a stale save over the hash record: %v, want Conflict", err)
	}
	if cur, cached, err := st.LoadCached(ctx, s.Key); err != nil || !cached || cur.Version != 3 {
		t.Fatalf("after the conflict the cache holds %v (cached %v, %v), want version 3", cur, cached, err)
	}
}
