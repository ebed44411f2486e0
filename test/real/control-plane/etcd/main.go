// Command etcd runs a single-member etcd server (go.etcd.io/etcd/server/v3 embed) for the real
// control-plane tier: data in -data-dir, clients on -listen-client, peers on -listen-peer.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		log.Fatalf("etcd: bad URL %q: %v", s, err)
	}
	return *u
}

func main() {
	dir := flag.String("data-dir", "", "data directory (required)")
	client := flag.String("listen-client", "http://127.0.0.1:2379", "client URL")
	peer := flag.String("listen-peer", "http://127.0.0.1:2380", "peer URL")
	flag.Parse()
	if *dir == "" {
		log.Fatal("etcd: -data-dir is required")
	}
	cfg := embed.NewConfig()
	cfg.Dir = *dir
	cfg.LogLevel = "warn"
	cfg.UnsafeNoFsync = true
	c, p := mustURL(*client), mustURL(*peer)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{c}, []url.URL{c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{p}, []url.URL{p}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		log.Printf("etcd: ready on %s", c.String())
	case <-time.After(60 * time.Second):
		e.Close()
		log.Fatal("etcd: not ready after 60s")
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
	case err := <-e.Err():
		log.Printf("etcd: %v", err)
	}
	e.Close()
}
