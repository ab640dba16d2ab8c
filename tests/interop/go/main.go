// tests/interop/go/main.go: hudl/fargo against heurekad.
//
// Drives github.com/hudl/fargo (pinned in go.mod) against one running
// heurekad whose service URL is $HEUREKA_URL (http://127.0.0.1:PORT/eureka/),
// once with fargo's XML codec and once with its JSON codec: register (and
// the read-back fargo does after it), heartbeat, get an application, all
// applications and a VIP, status and metadata updates, deregister. Every
// outcome is read back from heurekad's REST API as JSON with net/http, not
// taken from fargo's own word.
//
// Prints one "PASS: ..." or "FAIL: ..." line per check and, last,
// "INTEROP-SUMMARY name=go pass=N fail=M"; exits 1 if a check failed. Every
// wait is bounded.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hudl/fargo"
	logging "github.com/op/go-logging"
)

const (
	app   = "GO-SVC"
	other = "OTHER-APP"
	wait  = 10 * time.Second
)

var (
	base   string
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

// rest sends one request to heurekad and returns the status and the body
// decoded as JSON (nil when it is not JSON).
func rest(method, path, body string) (int, map[string]interface{}) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return -1, nil
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := web.Do(req)
	if err != nil {
		return -1, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var doc map[string]interface{}
	if json.Unmarshal(raw, &doc) != nil {
		doc = nil
	}
	return resp.StatusCode, doc
}

// restInstance returns heurekad's JSON view of one instance, or nil.
func restInstance(a, id string) map[string]interface{} {
	code, doc := rest("GET", "apps/"+a+"/"+id, "")
	if code != 200 || doc == nil {
		return nil
	}
	ins, _ := doc["instance"].(map[string]interface{})
	return ins
}

// field walks a JSON document along keys and returns the value as a string.
func field(m map[string]interface{}, keys ...string) string {
	var v interface{} = m
	for _, k := range keys {
		mm, ok := v.(map[string]interface{})
		if !ok {
			return ""
		}
		v = mm[k]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprintf("%.0f", x)
	case bool:
		return fmt.Sprintf("%t", x)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// waitFor polls pred every 100 ms until it holds or wait passes.
func waitFor(pred func() bool) bool {
	deadline := time.Now().Add(wait)
	for {
		if pred() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// registerOther registers OTHER-APP/other-1 over REST, as another client.
func registerOther() int {
	now := time.Now().UnixMilli()
	body := fmt.Sprintf(`{"instance":{"instanceId":"other-1",
"hostName":"other-1.example","app":"OTHER-APP","ipAddr":"127.0.0.11",
"status":"UP","overriddenstatus":"UNKNOWN",
"port":{"$":7001,"@enabled":"true"},"securePort":{"$":7443,"@enabled":"false"},
"countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90},
"metadata":{"role":"peer"},"homePageUrl":"http://other-1.example:7001/",
"statusPageUrl":"http://other-1.example:7001/info",
"healthCheckUrl":"http://other-1.example:7001/health",
"vipAddress":"other-app","secureVipAddress":"other-app",
"isCoordinatingDiscoveryServer":"false",
"lastUpdatedTimestamp":"%d","lastDirtyTimestamp":"%d"}}`, now, now)
	code, _ := rest("POST", "apps/"+other, body)
	return code
}

// sameInstance compares fargo's decoded instance with heurekad's JSON and
// returns the differences (empty when equal).
func sameInstance(f *fargo.Instance, r map[string]interface{}) string {
	var diff []string
	cmp := func(name, want, got string) {
		if want != got {
			diff = append(diff, fmt.Sprintf("%s: want %q got %q", name, want, got))
		}
	}
	cmp("instanceId", field(r, "instanceId"), f.InstanceId)
	cmp("hostName", field(r, "hostName"), f.HostName)
	cmp("app", field(r, "app"), f.App)
	cmp("ipAddr", field(r, "ipAddr"), f.IPAddr)
	cmp("status", field(r, "status"), string(f.Status))
	cmp("port", field(r, "port", "$"), fmt.Sprint(f.Port))
	cmp("port enabled", field(r, "port", "@enabled"), fmt.Sprint(f.PortEnabled))
	cmp("securePort", field(r, "securePort", "$"), fmt.Sprint(f.SecurePort))
	cmp("securePort enabled", field(r, "securePort", "@enabled"), fmt.Sprint(f.SecurePortEnabled))
	cmp("vipAddress", field(r, "vipAddress"), f.VipAddress)
	cmp("secureVipAddress", field(r, "secureVipAddress"), f.SecureVipAddress)
	cmp("homePageUrl", field(r, "homePageUrl"), f.HomePageUrl)
	cmp("healthCheckUrl", field(r, "healthCheckUrl"), f.HealthCheckUrl)
	cmp("countryId", field(r, "countryId"), fmt.Sprint(f.CountryId))
	cmp("dataCenterInfo name", field(r, "dataCenterInfo", "name"), f.DataCenterInfo.Name)
	cmp("durationInSecs", field(r, "leaseInfo", "durationInSecs"), fmt.Sprint(f.LeaseInfo.DurationInSecs))
	cmp("registrationTimestamp", field(r, "leaseInfo", "registrationTimestamp"),
		fmt.Sprint(f.LeaseInfo.RegistrationTimestamp))
	if md, ok := r["metadata"].(map[string]interface{}); ok {
		// Java writes an empty map as {"@class":"java.util.Collections$EmptyMap"};
		// fargo's JSON decoding keeps that marker as a key (it does so
		// against Java Eureka too), so it is left out on both sides.
		md = withoutClass(md)
		for k := range md {
			got, err := f.Metadata.GetString(k)
			if err != nil {
				got = "error: " + err.Error()
			}
			cmp("metadata "+k, field(md, k), got)
		}
		if n := len(withoutClass(f.Metadata.GetMap())); n != len(md) {
			diff = append(diff, fmt.Sprintf("metadata: %d keys, want %d", n, len(md)))
		}
	}
	return strings.Join(diff, "; ")
}

// withoutClass returns m without its "@class" key.
func withoutClass(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		if k != "@class" {
			out[k] = v
		}
	}
	return out
}

// findInstance returns the instance with id in app a, or nil.
func findInstance(a *fargo.Application, id string) *fargo.Instance {
	if a == nil {
		return nil
	}
	for _, i := range a.Instances {
		if i != nil && i.Id() == id {
			return i
		}
	}
	return nil
}

// run does the whole scenario with one of fargo's codecs.
func run(codec string) {
	// fargo joins its service URL and the path with "/": the XML run keeps
	// the trailing slash people write (.../eureka//apps/..., which Java
	// Eureka's servlet container folds into one), the JSON run drops it.
	url := base
	if codec == "json" {
		url = strings.TrimSuffix(base, "/")
	}
	conn := fargo.NewConn(url)
	conn.UseJson = codec == "json"
	id := "go-" + codec + "-1"
	p := codec + ": "

	ins := &fargo.Instance{
		InstanceId: id, HostName: id + ".example", App: app,
		IPAddr: "127.0.0.1", VipAddress: "go-svc",
		SecureVipAddress: "go-svc", Status: fargo.UP,
		Port: 8080, PortEnabled: true, SecurePort: 8443,
		HomePageUrl:    "http://" + id + ".example:8080/",
		StatusPageUrl:  "http://" + id + ".example:8080/info",
		HealthCheckUrl: "http://" + id + ".example:8080/health",
		CountryId:      1,
		DataCenterInfo: fargo.DataCenterInfo{Name: fargo.MyOwn},
		LeaseInfo:      fargo.LeaseInfo{RenewalIntervalInSecs: 1, DurationInSecs: 10},
	}
	ins.SetMetadataString("lang", "go")

	// 1. register, and fargo's read-back of its own registration.
	err := conn.RegisterInstance(ins)
	check(p+"register: RegisterInstance succeeds", err == nil, "%v", err)
	r := restInstance(app, id)
	if !check(p+"register: heurekad holds "+app+"/"+id, r != nil, "") {
		return
	}
	check(p+"register: status UP", field(r, "status") == "UP", "%s", field(r, "status"))
	check(p+"register: overriddenStatus UNKNOWN", field(r, "overriddenStatus") == "UNKNOWN",
		"%s", field(r, "overriddenStatus"))
	check(p+"register: fields as sent",
		field(r, "hostName") == id+".example" && field(r, "ipAddr") == "127.0.0.1" &&
			field(r, "port", "$") == "8080" && field(r, "port", "@enabled") == "true" &&
			field(r, "securePort", "$") == "8443" && field(r, "securePort", "@enabled") == "false" &&
			field(r, "vipAddress") == "go-svc" && field(r, "dataCenterInfo", "name") == "MyOwn" &&
			field(r, "healthCheckUrl") == "http://"+id+".example:8080/health",
		"%v", r)
	check(p+"register: metadata as sent", field(r, "metadata") == `{"lang":"go"}`,
		"%s", field(r, "metadata"))
	check(p+"register: lease intervals as sent",
		field(r, "leaseInfo", "renewalIntervalInSecs") == "1" &&
			field(r, "leaseInfo", "durationInSecs") == "10",
		"%s", field(r, "leaseInfo"))
	check(p+"register: fargo's read-back equals heurekad's JSON",
		sameInstance(ins, r) == "", "%s", sameInstance(ins, r))
	regTS := field(r, "leaseInfo", "registrationTimestamp")

	err = conn.RegisterInstance(ins)
	r = restInstance(app, id)
	check(p+"register again: fargo sees it registered, the lease stays",
		err == nil && r != nil && field(r, "leaseInfo", "registrationTimestamp") == regTS,
		"err %v", err)

	// 2. heartbeat
	renew0 := field(r, "leaseInfo", "lastRenewalTimestamp")
	var hbErr error
	beats := 0
	ok := waitFor(func() bool {
		if e := conn.HeartBeatInstance(ins); e != nil {
			hbErr = e
		}
		beats++
		r = restInstance(app, id)
		return r != nil && field(r, "leaseInfo", "lastRenewalTimestamp") > renew0
	})
	check(p+"heartbeat: every heartbeat answered 200", hbErr == nil, "%v", hbErr)
	check(p+"heartbeat: heurekad's lastRenewalTimestamp advances", ok, "after %d heartbeats", beats)
	check(p+"heartbeat: same lease (registrationTimestamp unchanged)",
		r != nil && field(r, "leaseInfo", "registrationTimestamp") == regTS, "")

	// 3. get app, all apps, VIP
	fa, err := conn.GetApp(other)
	check(p+"get app: GetApp(OTHER-APP) succeeds", err == nil && fa != nil, "%v", err)
	if err == nil {
		check(p+"get app: one instance", len(fa.Instances) == 1, "%d", len(fa.Instances))
		fi := findInstance(fa, "other-1")
		ro := restInstance(other, "other-1")
		check(p+"get app: other-1 as fargo decoded it equals heurekad's JSON",
			fi != nil && ro != nil && sameInstance(fi, ro) == "", "%s",
			func() string {
				if fi == nil || ro == nil {
					return "missing"
				}
				return sameInstance(fi, ro)
			}())
	}
	sa, err := conn.GetApp(strings.ToLower(app))
	check(p+"get app: GetApp(go-svc) lists this instance",
		err == nil && findInstance(sa, id) != nil, "%v", err)
	_, err = conn.GetApp("NO-SUCH-APP")
	_, notFound := err.(fargo.AppNotFoundError)
	check(p+"get app: an unknown app is AppNotFoundError (404)", notFound, "%v", err)
	apps, err := conn.GetApps()
	check(p+"get apps: GetApps lists OTHER-APP and GO-SVC",
		err == nil && apps[other] != nil && findInstance(apps[app], id) != nil, "%v", err)
	vis, err := conn.GetInstancesByVIPAddress("other-app", false)
	check(p+"vip: other-app has other-1",
		err == nil && len(vis) == 1 && vis[0].Id() == "other-1", "%v %d", err, len(vis))
	vis, err = conn.GetInstancesByVIPAddress("OTHER-APP", false)
	check(p+"vip: VIP names are case-sensitive (OTHER-APP is empty)",
		err == nil && len(vis) == 0, "%v %d", err, len(vis))
	vis, err = conn.GetInstancesByVIPAddress("go-svc", true)
	check(p+"svip: go-svc lists this instance",
		err == nil && len(vis) >= 1 && func() bool {
			for _, v := range vis {
				if v.Id() == id {
					return true
				}
			}
			return false
		}(), "%v %d", err, len(vis))

	// 4. status updates
	err = conn.UpdateInstanceStatus(ins, fargo.OUTOFSERVICE)
	r = restInstance(app, id)
	check(p+"status: OUT_OF_SERVICE set",
		err == nil && r != nil && field(r, "status") == "OUT_OF_SERVICE" &&
			field(r, "overriddenStatus") == "OUT_OF_SERVICE",
		"err %v, %s/%s", err, field(r, "status"), field(r, "overriddenStatus"))
	hbErr = conn.HeartBeatInstance(ins)
	r = restInstance(app, id)
	check(p+"status: OUT_OF_SERVICE holds across a heartbeat",
		hbErr == nil && r != nil && field(r, "status") == "OUT_OF_SERVICE", "%v", hbErr)
	fi, err := conn.GetInstance(app, id)
	check(p+"status: fargo's GetInstance reads OUT_OF_SERVICE",
		err == nil && fi != nil && fi.Status == fargo.OUTOFSERVICE, "%v %v", err, fi)
	err = conn.UpdateInstanceStatus(ins, fargo.UP)
	r = restInstance(app, id)
	check(p+"status: back to UP", err == nil && r != nil && field(r, "status") == "UP",
		"err %v, %s", err, field(r, "status"))

	// 5. metadata update
	err = conn.AddMetadataString(ins, "color", "blue")
	r = restInstance(app, id)
	check(p+"metadata: heurekad has the new key and keeps the old one",
		err == nil && r != nil && field(r, "metadata", "color") == "blue" &&
			field(r, "metadata", "lang") == "go",
		"err %v, %s", err, field(r, "metadata"))
	sa, err = conn.GetApp(app)
	mi := findInstance(sa, id)
	color := ""
	if mi != nil {
		color, _ = mi.Metadata.GetString("color")
	}
	check(p+"metadata: fargo's GetApp reads it back", err == nil && color == "blue",
		"%v %q", err, color)
	hbErr = conn.HeartBeatInstance(ins)
	check(p+"metadata: heartbeats still answered 200", hbErr == nil, "%v", hbErr)

	// 6. deregister
	err = conn.DeregisterInstance(ins)
	check(p+"deregister: DeregisterInstance succeeds", err == nil, "%v", err)
	code, _ := rest("GET", "apps/"+app+"/"+id, "")
	check(p+"deregister: GET answers 404", code == 404, "HTTP %d", code)
	hbErr = conn.HeartBeatInstance(ins)
	code, _ = fargo.HTTPResponseStatusCode(hbErr)
	check(p+"deregister: a heartbeat now answers 404", code == 404, "%v", hbErr)
	err = conn.DeregisterInstance(ins)
	code, _ = fargo.HTTPResponseStatusCode(err)
	check(p+"deregister: a second cancel answers 404", code == 404, "%v", err)
	err = conn.UpdateInstanceStatus(ins, fargo.OUTOFSERVICE)
	code, _ = fargo.HTTPResponseStatusCode(err)
	check(p+"deregister: a status update now answers 404", code == 404, "%v", err)
	err = conn.AddMetadataString(ins, "color", "red")
	code, _ = fargo.HTTPResponseStatusCode(err)
	check(p+"deregister: a metadata update now answers 404", code == 404, "%v", err)
	code, _ = rest("GET", "apps/"+app+"/"+id, "")
	check(p+"deregister: none of these brought it back", code == 404, "HTTP %d", code)
}

// amazon registers an instance with Amazon data-center info (no
// instanceId: its id is the EC2 instance-id) with one of fargo's codecs,
// reads it back and cancels it.
func amazon(codec string) {
	conn := fargo.NewConn(strings.TrimSuffix(base, "/"))
	conn.UseJson = codec == "json"
	id := "i-" + codec + "0001"
	p := codec + ": amazon: "
	ins := &fargo.Instance{
		HostName: "ec2-" + codec + ".example", App: "AWS-SVC",
		IPAddr: "127.0.0.1", VipAddress: "aws-svc", Status: fargo.UP,
		Port: 8080, PortEnabled: true, CountryId: 1,
		DataCenterInfo: fargo.DataCenterInfo{Name: fargo.Amazon,
			Metadata: fargo.AmazonMetadataType{InstanceID: id,
				AvailabilityZone: "us-east-1a", LocalIpv4: "127.0.0.1"}},
		LeaseInfo: fargo.LeaseInfo{DurationInSecs: 10},
	}
	err := conn.RegisterInstance(ins)
	check(p+"register succeeds", err == nil, "%v", err)
	r := restInstance("AWS-SVC", id)
	check(p+"heurekad files it under the EC2 instance-id",
		r != nil && field(r, "dataCenterInfo", "@class") == "com.netflix.appinfo.AmazonInfo" &&
			field(r, "dataCenterInfo", "name") == "Amazon" &&
			field(r, "dataCenterInfo", "metadata", "instance-id") == id &&
			field(r, "dataCenterInfo", "metadata", "availability-zone") == "us-east-1a",
		"%v", r)
	fi, err := conn.GetInstance("AWS-SVC", id)
	check(p+"fargo reads the data-center metadata back",
		err == nil && fi != nil && fi.Id() == id &&
			fi.DataCenterInfo.Metadata.AvailabilityZone == "us-east-1a",
		"%v %v", err, fi)
	err = conn.HeartBeatInstance(ins)
	check(p+"heartbeat answered 200", err == nil, "%v", err)
	err = conn.DeregisterInstance(ins)
	code, _ := rest("GET", "apps/AWS-SVC/"+id, "")
	check(p+"deregistered", err == nil && code == 404, "%v HTTP %d", err, code)
}

// main runs the scenario with both codecs and prints the summary.
func main() {
	logging.SetLevel(logging.CRITICAL, "fargo")
	base = os.Getenv("HEUREKA_URL")
	if base == "" {
		base = "http://127.0.0.1:8761/eureka/"
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	code := registerOther()
	check("setup: OTHER-APP/other-1 registered over REST", code == 204, "HTTP %d", code)
	for _, codec := range []string{"xml", "json"} {
		run(codec)
		amazon(codec)
	}
	fmt.Printf("INTEROP-SUMMARY name=go pass=%d fail=%d\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
