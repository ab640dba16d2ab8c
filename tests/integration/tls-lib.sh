# tests/integration/tls-lib.sh: certificates for the TLS tests, made at
# test time with the openssl command into a temporary directory.
#
#	. "$(dirname "$0")/tls-lib.sh"     (after lib.sh)
#	hk_tls_certs DIR
#
# writes, all EC P-256 and PEM:
#	ca.pem              the CA everything below chains to (trust bundle)
#	server.pem/.key     CN=localhost, SAN localhost and 127.0.0.1 (serial 0x1001)
#	server2.pem         the same key re-issued (serial 0x1002), for reloads
#	expired.pem/.key    a server certificate that expired in 2020
#	wronghost.pem/.key  a server certificate for wrong.example only
#	peer.pem/.key       a client (and server) certificate for peers
#	otherca.pem         an unrelated CA
#	other.pem/.key      a client certificate from otherca
# and sets HK_TLS_DIR=DIR.

# Issue DIR/NAME.pem for key DIR/NAME.key (or KEYNAME) from CA with SERIAL.
_hk_tls_issue()
{
	local dir=$1 ca=$2 name=$3 subj=$4 ext=$5 serial=$6 start=${7:-} end=${8:-}
	local key=${9:-$name}
	[ -f "$dir/$key.key" ] || openssl genpkey -algorithm EC \
	    -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$key.key" 2>/dev/null
	openssl req -new -key "$dir/$key.key" -subj "$subj" \
	    -out "$dir/$name.csr" 2>/dev/null
	printf '%s\n' "$ext" >"$dir/$name.ext"
	if [ -z "$start" ]; then
		openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" \
		    -CAkey "$dir/$ca.key" -set_serial "$serial" -days 2 \
		    -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
	else
		# Dates in the past need "openssl ca" (x509 -req cannot set them).
		mkdir -p "$dir/db"
		: >"$dir/db/index.txt"
		printf '%s\n' "${serial#0x}" >"$dir/db/serial"
		cat >"$dir/db/ca.cnf" <<CNF
[ ca ]
default_ca = hk
[ hk ]
database = $dir/db/index.txt
serial = $dir/db/serial
new_certs_dir = $dir/db
default_md = sha256
policy = any
copy_extensions = none
[ any ]
commonName = supplied
CNF
		openssl ca -batch -config "$dir/db/ca.cnf" -cert "$dir/$ca.pem" \
		    -keyfile "$dir/$ca.key" -startdate "$start" -enddate "$end" \
		    -extfile "$dir/$name.ext" -in "$dir/$name.csr" \
		    -out "$dir/$name.pem" -notext 2>/dev/null
	fi
	[ -s "$dir/$name.pem" ] || fail "could not issue $name.pem"
}

# Make a CA NAME in DIR.
_hk_tls_ca()
{
	local dir=$1 name=$2 cn=$3
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$dir/$name.key" 2>/dev/null
	openssl req -x509 -new -key "$dir/$name.key" -subj "/CN=$cn" -days 2 \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign,cRLSign \
	    -out "$dir/$name.pem" 2>/dev/null || fail "could not make CA $name"
}

# Make every certificate the TLS tests use in DIR (see the head comment).
hk_tls_certs()
{
	local dir=$1
	local srv="subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth
basicConstraints=CA:FALSE"
	command -v openssl >/dev/null || fail "the openssl command is needed"
	_hk_tls_ca "$dir" ca "heureka test CA"
	_hk_tls_ca "$dir" otherca "some other CA"
	_hk_tls_issue "$dir" ca server /CN=localhost "$srv" 0x1001
	_hk_tls_issue "$dir" ca server2 /CN=localhost "$srv" 0x1002 "" "" server
	_hk_tls_issue "$dir" ca expired /CN=localhost "$srv" 0x1003 \
	    20200101000000Z 20200102000000Z
	_hk_tls_issue "$dir" ca wronghost /CN=wrong.example \
	    "subjectAltName=DNS:wrong.example
extendedKeyUsage=serverAuth" 0x1004
	# Peers present this one to each other, and serve with it too.
	_hk_tls_issue "$dir" ca peer /CN=heureka-peer \
	    "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth" 0x1005
	_hk_tls_issue "$dir" otherca other /CN=intruder \
	    "extendedKeyUsage=clientAuth" 0x2001
	HK_TLS_DIR=$dir
}
