vcl 4.1;

# taksi-server behind Varnish, with vmod_xkey (Debian: apt-get install varnish varnish-modules).
# Skeletons are kept as long as their s-maxage says (cdn.skeleton_shared_max_age), and dropped by
# tag the moment a change is served: taksi-server sends `PURGE /` with the tags in `xkey-purge`
# (config.json: "cdn": {"purge": [{"varnish": ["http://THIS-NODE:6081"]}]}). See docs/operations.md.

import xkey;

# The taksi-server service (or one replica; Varnish spreads nothing by itself).
backend taksi {
    .host = "127.0.0.1";
    .port = "8080";
}

# Who may purge: the addresses of the taksi-server replicas.
acl purgers {
    "127.0.0.1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        # vmod_xkey's example reads `xkey`; later versions' `xkey-purge`. taksi-server sends both.
        if (req.http.xkey-purge) {
            set req.http.n-gone = xkey.purge(req.http.xkey-purge);
        } else {
            set req.http.n-gone = xkey.purge(req.http.xkey);
        }
        return (synth(200, "Invalidated " + req.http.n-gone + " objects"));
    }
}

sub vcl_backend_response {
    # taksi-server names what each skeleton was built from in Surrogate-Key: xkey indexes it.
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
}

sub vcl_deliver {
    # The tags are for this cache, not for phones.
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
}
