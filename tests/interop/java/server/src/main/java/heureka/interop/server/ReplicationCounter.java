/*
 * Counts the replication batches this Java server sends to each peer, so
 * the interop test can assert that nothing loops: a filter on the
 * server's own replication client (Spring Cloud's
 * ReplicationClientAdditionalFilters) sees every POST
 * peerreplication/batch before it leaves, with its ReplicationList.
 * GET /interop/sent answers the counts as JSON, GET /interop/peers the
 * peers the server replicates to.
 */
package heureka.interop.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.eureka.cluster.PeerEurekaNode;
import com.netflix.eureka.cluster.PeerEurekaNodes;
import com.netflix.eureka.cluster.protocol.ReplicationInstance;
import com.netflix.eureka.cluster.protocol.ReplicationList;

import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.netflix.eureka.server.ReplicationClientAdditionalFilters;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** The counting filter, its bean and its endpoint. */
@Configuration
@RestController
public class ReplicationCounter implements ClientRequestFilter {
	/* "host:port" -> counter name -> count */
	private final Map<String, Map<String, AtomicLong>> sent =
	    new ConcurrentHashMap<>();

	private final ObjectProvider<PeerEurekaNodes> nodes;

	/** Takes the peer list lazily (it is built after this bean). */
	public ReplicationCounter(ObjectProvider<PeerEurekaNodes> nodes) {
		this.nodes = nodes;
	}

	/** Hands the filter to the Eureka server's replication client. */
	@Bean
	public ReplicationClientAdditionalFilters replicationFilters() {
		return new ReplicationClientAdditionalFilters(List.of(this));
	}

	/** Adds one to counter name of peer. */
	private void count(String peer, String name, long n) {
		sent.computeIfAbsent(peer, k -> new ConcurrentHashMap<>())
		    .computeIfAbsent(name, k -> new AtomicLong())
		    .addAndGet(n);
	}

	/** Counts a batch and its items by action. */
	@Override
	public void filter(ClientRequestContext rc) {
		String path = rc.getUri().getPath();
		if (!path.endsWith("peerreplication/batch") &&
		    !path.endsWith("peerreplication/batch/"))
			return;
		String peer = rc.getUri().getHost() + ":" + rc.getUri().getPort();
		count(peer, "batches", 1);
		Object e = rc.getEntity();
		if (!(e instanceof ReplicationList))
			return;
		for (ReplicationInstance ri :
		    ((ReplicationList)e).getReplicationList()) {
			count(peer, "items", 1);
			count(peer, String.valueOf(ri.getAction()), 1);
		}
	}

	/** GET /interop/sent: {"host:port": {"batches": n, "items": n, ...}}. */
	@GetMapping("/interop/sent")
	public Map<String, Map<String, Long>> sent() {
		Map<String, Map<String, Long>> out = new TreeMap<>();
		sent.forEach((peer, m) -> {
			Map<String, Long> c = new TreeMap<>();
			m.forEach((k, v) -> c.put(k, v.get()));
			out.put(peer, c);
		});
		return out;
	}

	/** GET /interop/peers: the service URLs of the peers, as a list. */
	@GetMapping("/interop/peers")
	public List<String> peers() {
		List<String> out = new ArrayList<>();
		for (PeerEurekaNode n : nodes.getObject().getPeerEurekaNodes())
			out.add(n.getServiceUrl());
		return out;
	}
}
