// tests/interop/consul/main.go: Consul's own clients against heurekad's
// read-only Consul API (docs/dns-consul.md).
//
// Two clients, pinned in go.mod:
//   - HashiCorp's Go client (github.com/hashicorp/consul/api): catalog
//     services, catalog service with a tag, health (passing and all),
//     nodes, status/leader, agent/self, and a blocking health query
//     that must return promptly after a registration, not at its wait;
//   - Prometheus's Consul service discovery (the code behind
//     consul_sd_configs, github.com/prometheus/prometheus/discovery/consul)
//     run as Prometheus runs it: it must discover the targets of
//     "web" and drop the one cancelled through the Eureka API.
//
// heurekad's address is $HEUREKA_ADDR (127.0.0.1:PORT); instances are
// registered and cancelled through its Eureka REST API with net/http.
// Prints one "PASS: ..." or "FAIL: ..." line per check and, last,
// "INTEROP-SUMMARY name=consul pass=N fail=M"; exits 1 if a check failed.
// Every wait is bounded.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/discovery/consul"
	"github.com/prometheus/prometheus/discovery/targetgroup"
)

var (
	addr   string
	passed int
	failed int
	web    = &http.Client{Timeout: 5 * time.Second}
)

// check counts and prints one check.
func check(name string, ok bool, detail string, args ...interface{}) bool {
	if ok {
		passed++
		fmt.Printf("PASS: %s\n", name)
	} else {
		failed++
		fmt.Printf("FAIL: %s %s\n", name, fmt.Sprintf(detail, args...))
	}
	return ok
}

// eureka sends one request to heurekad's Eureka API; returns the status.
func eureka(method, path, body string) int {
	req, err := http.NewRequest(method, "http://"+addr+"/eureka/"+path,
		strings.NewReader(body))
	if err != nil {
		return -1
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := web.Do(req)
	if err != nil {
		return -1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// register registers app/id at ip:port with status and the tags metadata.
func register(app, id, ip string, port int, status, tags string) {
	body := fmt.Sprintf(`{"instance":{"instanceId":%q,"hostName":"%s.example",
"app":%q,"ipAddr":%q,"status":%q,"port":{"$":%d,"@enabled":"true"},
"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
"vipAddress":"web","metadata":{"tags":%q,"team":"core"}}}`, id, id, app,
		ip, status, port, tags)
	code := eureka("POST", "apps/"+app, body)
	check("eureka register "+app+"/"+id, code == 204, "got %d", code)
}

// ids lists the service ids of health entries, sorted.
func ids(entries []*api.ServiceEntry) string {
	var v []string
	for _, e := range entries {
		v = append(v, e.Service.ID)
	}
	sort.Strings(v)
	return strings.Join(v, ",")
}

// goClient drives HashiCorp's client.
func goClient() {
	cfg := api.DefaultConfig()
	cfg.Address = addr
	c, err := api.NewClient(cfg)
	if !check("api.NewClient", err == nil, "%v", err) {
		return
	}
	svcs, meta, err := c.Catalog().Services(nil)
	check("catalog services", err == nil && svcs["web"] != nil &&
		svcs["db"] != nil && meta.LastIndex > 0,
		"err %v services %v index %d", err, svcs, meta)
	fmt.Printf("  catalog services: %v (X-Consul-Index %d)\n", svcs, meta.LastIndex)
	tags := strings.Join(svcs["web"], ",")
	check("catalog service tags", strings.Contains(tags, "prod") &&
		strings.Contains(tags, "v1"), "tags %q", tags)

	cs, _, err := c.Catalog().Service("web", "prod", nil)
	ok := err == nil && len(cs) == 1 && cs[0].ServiceID == "web-1" &&
		cs[0].ServicePort == 8080 && cs[0].ServiceAddress == "10.0.0.1" &&
		cs[0].ServiceMeta["team"] == "core" && cs[0].Node == "web-1.example"
	check("catalog service web?tag=prod", ok, "err %v got %+v", err, cs)

	hs, hmeta, err := c.Health().Service("web", "", true, nil)
	check("health service web passing", err == nil && ids(hs) == "web-1,web-2",
		"err %v ids %q", err, ids(hs))
	for _, e := range hs {
		fmt.Printf("  health: %s %s:%d node %s checks %s\n", e.Service.ID,
			e.Service.Address, e.Service.Port, e.Node.Node,
			e.Checks.AggregatedStatus())
	}
	db, _, err := c.Health().Service("db", "", false, nil)
	check("health service db (STARTING) is warning", err == nil &&
		len(db) == 1 && db[0].Checks.AggregatedStatus() == api.HealthWarning,
		"err %v %+v", err, db)
	db, _, err = c.Health().Service("db", "", true, nil)
	check("health service db passing is empty", err == nil && len(db) == 0,
		"err %v %d entries", err, len(db))

	nodes, _, err := c.Catalog().Nodes(nil)
	check("catalog nodes", err == nil && len(nodes) == 3, "err %v %d nodes",
		err, len(nodes))
	leader, err := c.Status().Leader()
	check("status leader", err == nil && leader != "", "err %v %q", err, leader)
	self, err := c.Agent().Self()
	check("agent self datacenter", err == nil &&
		self["Config"]["Datacenter"] == "default", "err %v %v", err, self)

	// A blocking query, then a registration: it must return at once.
	type result struct {
		entries []*api.ServiceEntry
		meta    *api.QueryMeta
		err     error
		took    time.Duration
	}
	done := make(chan result, 1)
	go func() {
		t0 := time.Now()
		e, m, err := c.Health().Service("web", "", true,
			&api.QueryOptions{WaitIndex: hmeta.LastIndex,
				WaitTime: 60 * time.Second})
		done <- result{e, m, err, time.Since(t0)}
	}()
	time.Sleep(1 * time.Second)
	select {
	case r := <-done:
		check("blocking query holds", false, "returned after %v: %v",
			r.took, r.err)
		return
	default:
		check("blocking query holds", true, "")
	}
	changed := time.Now()
	register("WEB", "web-3", "10.0.0.3", 8082, "UP", "canary")
	select {
	case r := <-done:
		since := time.Since(changed)
		fmt.Printf("  blocking query returned %v after the change "+
			"(index %d -> %d)\n", since.Round(time.Millisecond),
			hmeta.LastIndex, r.meta.LastIndex)
		check("blocking query returns after the change", r.err == nil &&
			ids(r.entries) == "web-1,web-2,web-3" &&
			r.meta.LastIndex > hmeta.LastIndex && since < 5*time.Second,
			"err %v ids %q after %v", r.err, ids(r.entries), since)
	case <-time.After(20 * time.Second):
		check("blocking query returns after the change", false,
			"no answer 20 s after the change")
	}
}

// targets of the group for "web", as sorted addresses.
func targets(g *targetgroup.Group) string {
	var v []string
	for _, t := range g.Targets {
		v = append(v, string(t[model.AddressLabel]))
	}
	sort.Strings(v)
	return strings.Join(v, ",")
}

// promSD drives Prometheus's Consul discovery.
func promSD() {
	cfg := consul.DefaultSDConfig
	cfg.Server = addr
	cfg.RefreshInterval = model.Duration(200 * time.Millisecond)
	reg := prometheus.NewRegistry()
	rm := discovery.NewRefreshMetrics(reg)
	metrics := cfg.NewDiscovererMetrics(reg, rm)
	if !check("prometheus metrics register", metrics.Register() == nil, "") {
		return
	}
	defer metrics.Unregister()
	logger := slog.New(slog.NewTextHandler(os.Stderr,
		&slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := consul.NewDiscovery(&cfg, logger, metrics)
	if !check("prometheus consul.NewDiscovery", err == nil, "%v", err) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ch := make(chan []*targetgroup.Group, 16)
	go d.Run(ctx, ch)

	// await reads groups until web's targets are want.
	await := func(want string) (*targetgroup.Group, bool) {
		deadline := time.After(20 * time.Second)
		for {
			select {
			case gs := <-ch:
				for _, g := range gs {
					if g.Source == "web" && targets(g) == want {
						return g, true
					}
				}
			case <-deadline:
				return nil, false
			}
		}
	}
	want := "10.0.0.1:8080,10.0.0.2:8081,10.0.0.3:8082"
	g, ok := await(want)
	if check("prometheus discovers web's targets", ok, "not %s in 20 s", want) {
		for _, t := range g.Targets {
			fmt.Printf("  prometheus target %s health=%s service_id=%s "+
				"tags=%s dc=%s\n", t[model.AddressLabel],
				t["__meta_consul_health"], t["__meta_consul_service_id"],
				t["__meta_consul_tags"], g.Labels["__meta_consul_dc"])
		}
	}
	code := eureka("DELETE", "apps/WEB/web-2", "")
	check("eureka cancel WEB/web-2", code == 200, "got %d", code)
	t0 := time.Now()
	want = "10.0.0.1:8080,10.0.0.3:8082"
	_, ok = await(want)
	check("prometheus drops the cancelled target", ok, "not %s in 20 s", want)
	fmt.Printf("  prometheus saw the cancel after %v\n",
		time.Since(t0).Round(time.Millisecond))
}

func main() {
	addr = os.Getenv("HEUREKA_ADDR")
	if addr == "" {
		fmt.Println("HEUREKA_ADDR is not set")
		os.Exit(2)
	}
	register("WEB", "web-1", "10.0.0.1", 8080, "UP", "prod, v1")
	register("WEB", "web-2", "10.0.0.2", 8081, "UP", "v1")
	register("DB", "db-1", "10.0.0.9", 5432, "STARTING", "")
	goClient()
	promSD()
	fmt.Printf("INTEROP-SUMMARY name=consul pass=%d fail=%d\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
