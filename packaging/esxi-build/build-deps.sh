# How each static library of the ESXi build is configured and built.
# Sourced by packaging/esxi-build.sh; every function runs in the unpacked
# Debian source tree and installs into $P.  The hash of this file is part of
# the cache key, so editing a recipe rebuilds the libraries on the next
# `make esxi`.
#
# Common rules: CC=musl-gcc (musl's specs use -nostdinc, so no glibc header
# can leak in), static archives only, no programs, tests or documentation of
# the libraries (they cost CI minutes and nobody ships them), -j2 at most
# (the build machine has two cores shared with the rest of the team).

DEP_CFLAGS="-O2 -ffunction-sections -fdata-sections"

build_zlib() {
	CC=musl-gcc CFLAGS="$DEP_CFLAGS" ./configure --static --prefix="$P" >configure.log 2>&1 ||
		{ tail -20 configure.log; return 1; }
	make -j2 libz.a >make.log 2>&1 || { tail -30 make.log; return 1; }
	make install >>make.log 2>&1 || { tail -30 make.log; return 1; }
}

# The Debian orig tarball of libyaml is a git snapshot without `configure`
# (Debian runs autoreconf).  Rather than depend on autotools or cmake, compile
# its eight .c files directly: this is all its build system does.
build_libyaml() {
	v=$(sed -n 's/^set (YAML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))$/\2/p' CMakeLists.txt |
		tr '\n' . | sed 's/\.$//')
	[ -n "$v" ] || { echo "libyaml: version not found in CMakeLists.txt" >&2; return 1; }
	maj=${v%%.*}; rest=${v#*.}; min=${rest%%.*}; pat=${rest#*.}
	mkdir -p cfg
	{
		echo "#define YAML_VERSION_MAJOR $maj"
		echo "#define YAML_VERSION_MINOR $min"
		echo "#define YAML_VERSION_PATCH $pat"
		echo "#define YAML_VERSION_STRING \"$v\""
	} >cfg/config.h
	objs=""
	for c in src/*.c; do
		o=${c%.c}.o
		musl-gcc $DEP_CFLAGS -DHAVE_CONFIG_H -DYAML_DECLARE_STATIC -Icfg -Iinclude -c -o "$o" "$c" ||
			return 1
		objs="$objs $o"
	done
	mkdir -p "$P/lib" "$P/include" "$P/lib/pkgconfig"
	rm -f "$P/lib/libyaml.a"
	ar rcs "$P/lib/libyaml.a" $objs
	cp include/yaml.h "$P/include/"
	cat >"$P/lib/pkgconfig/yaml-0.1.pc" <<EOF
prefix=$P
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: LibYAML
Description: Library to parse and emit YAML
Version: $v
Cflags: -I\${includedir}
Libs: -L\${libdir} -lyaml
EOF
}

# OpenSSL 3.0 (see docs/esxi-build.md for why not mbedTLS).  Only what a TLS
# client needs: no engines, modules, legacy provider, DTLS, SSLv3, SRP, PSK,
# NPN, CMS/TS/OCSP/CT, deprecated APIs, multi-block CBC-HMAC (a server-side
# write optimisation), and none of the algorithms no TLS
# server we talk to negotiates (DSA, DES, binary curves, IDEA, SEED, ...);
# -Os (the hot paths are assembly anyway).  That is ~550 KB off the binary.
# No async (musl has no makecontext), no secure heap (needs <linux/mman.h> and
# mlock2), no kTLS.  --with-rand-seed=devrandom seeds only from /dev/urandom:
# the default "os" source calls getrandom(2), which VMkernel may not
# implement.  no-autoload-config: a host's openssl.cnf must not change our TLS
# behaviour (curl is told the same).
build_openssl() {
	./Configure linux-x86_64 CC=musl-gcc --prefix="$P" --libdir=lib \
		--openssldir=/etc/ssl \
		no-shared no-module no-pic no-dso no-engine no-legacy no-comp \
		no-ssl3 no-dtls no-srp no-async no-tests no-ui-console no-cms \
		no-ts no-ocsp no-ct no-srtp no-idea no-mdc2 no-rc5 no-whirlpool \
		no-seed no-camellia no-aria no-bf no-cast no-rc2 no-rc4 no-md4 \
		no-sm2 no-sm3 no-sm4 no-siphash no-gost no-autoload-config \
		no-secure-memory no-ktls --with-rand-seed=devrandom \
		no-dsa no-ec2m no-des no-scrypt no-deprecated no-rmd160 no-blake2 \
		no-ssl-trace no-nextprotoneg no-psk no-multiblock \
		-Os -ffunction-sections -fdata-sections >configure.log 2>&1 || { tail -20 configure.log; return 1; }
	make -j2 build_libs >make.log 2>&1 || { tail -30 make.log; return 1; }
	make install_dev >>make.log 2>&1 || { tail -30 make.log; return 1; }
}

# curl: HTTP/1.1 over TLS and nothing else: no proxy (the agent sets none
# and ignores the environment's), Basic as the only authentication (Loki's;
# every other sink sends its token as a header).  Debian's tree has the flavour
# patches for the GnuTLS and NSS builds applied last; Debian's own rules pop
# them for the OpenSSL flavour, we do the same.  All security patches stay.
# The synchronous resolver (no resolver thread, see docs/esxi-build.md).
# The default CA bundle is ESXi's trust store; ssl_ca_path overrides it.
build_curl() {
	for p in 99_nss.patch 90_gnutls.patch; do
		if [ -f debian/patches/$p ] && patch -R -p1 --dry-run -s <debian/patches/$p >/dev/null 2>&1; then
			patch -R -p1 -s <debian/patches/$p || return 1
		fi
	done
	CC=musl-gcc CFLAGS="$DEP_CFLAGS" PKG_CONFIG_LIBDIR="$P/lib/pkgconfig" PKG_CONFIG_PATH= \
	LIBS="-pthread" \
	./configure --prefix="$P" --disable-shared --enable-static \
		--disable-dependency-tracking --disable-silent-rules \
		--with-openssl="$P" --with-zlib="$P" \
		--with-ca-bundle=/etc/vmware/ssl/castore.pem --without-ca-path \
		--without-ca-fallback \
		--disable-openssl-auto-load-config \
		--disable-threaded-resolver --disable-socketpair \
		--disable-ftp --disable-file --disable-ldap --disable-ldaps \
		--disable-rtsp --disable-dict --disable-telnet --disable-tftp \
		--disable-pop3 --disable-imap --disable-smb --disable-smtp \
		--disable-gopher --disable-mqtt --disable-manual \
		--disable-libcurl-option --disable-ntlm --disable-ntlm-wb \
		--disable-tls-srp --disable-unix-sockets --disable-cookies \
		--disable-doh --disable-mime --disable-netrc --disable-alt-svc \
		--disable-hsts --disable-websockets --disable-dnsshuffle \
		--disable-progress-meter --disable-sspi --disable-proxy \
		--disable-kerberos-auth --disable-negotiate-auth --disable-aws \
		--disable-digest-auth --disable-get-easy-options \
		--disable-headers-api --disable-bindlocal \
		--without-libidn2 --without-libpsl --without-brotli --without-zstd \
		--without-nghttp2 --without-libssh2 --without-libssh --without-wolfssh \
		--without-librtmp --without-hyper --without-ngtcp2 --without-nghttp3 \
		--without-quiche --without-msh3 --without-libgsasl --without-gssapi \
		--without-zsh-functions-dir --without-fish-functions-dir \
		>configure.log 2>&1 || { tail -30 configure.log; return 1; }
	make -j2 -C lib >make.log 2>&1 || { tail -30 make.log; return 1; }
	make -C lib install >>make.log 2>&1 || { tail -30 make.log; return 1; }
	make -C include install >>make.log 2>&1 || { tail -30 make.log; return 1; }
	# The configure summary (protocols, features) is worth keeping.
	sed -n '/Configured to build curl/,$p' configure.log >"$P/curl-configure-summary.txt"
}

# PCRE2, the 8-bit library only, with its JIT (the agent falls back to the
# interpreter at run time where executable memory is refused, as on ESXi's
# userworld; agent/lib/rx.h).  No pcre2grep, no 16/32-bit libraries, no
# Unicode property tables beyond what the library carries anyway.
build_pcre2() {
	CC=musl-gcc CFLAGS="$DEP_CFLAGS" ./configure --prefix="$P" \
		--disable-shared --enable-static --enable-jit \
		--disable-pcre2-16 --disable-pcre2-32 \
		--disable-pcre2grep-jit --disable-pcre2grep-libz \
		--disable-pcre2grep-libbz2 --disable-pcre2test-libedit \
		--disable-pcre2test-libreadline \
		>configure.log 2>&1 || { tail -30 configure.log; return 1; }
	make -j2 libpcre2-8.la >make.log 2>&1 || { tail -30 make.log; return 1; }
	make install-libLTLIBRARIES install-nodist_includeHEADERS \
		install-pkgconfigDATA >>make.log 2>&1 || { tail -30 make.log; return 1; }
}

# expat: the vSphere client's XML reader (collectors/host/vsphere_xml.c).
# Debian's orig tarball is the upstream git tag (expat/ inside, no
# `configure`): compile its three library files directly with the
# configuration CMake would write for Linux (expat_config.h.cmake), as for
# libyaml.  XML_DTD and XML_NS stay on (upstream's default build); the agent
# refuses DOCTYPEs itself.  No getrandom(2) (VMkernel may not implement it,
# tests/e2e/test_esxi_build.py forbids it): the hash salt comes from
# /dev/urandom (XML_DEV_URANDOM), as OpenSSL's seed does.
build_expat() {
	[ -d expat/lib ] && cd expat
	mkdir -p cfg
	cat >cfg/expat_config.h <<'CFG'
#ifndef EXPAT_CONFIG_H
#define EXPAT_CONFIG_H 1
#define BYTEORDER 1234
#define HAVE_FCNTL_H 1
#define HAVE_GETPAGESIZE 1
#define HAVE_INTTYPES_H 1
#define HAVE_MMAP 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define PACKAGE "expat"
#define STDC_HEADERS 1
#define XML_CONTEXT_BYTES 1024
#define XML_DEV_URANDOM 1
#define XML_DTD 1
#define XML_NS 1
#endif
CFG
	for f in xmlparse xmltok xmlrole; do
		musl-gcc $DEP_CFLAGS -D_GNU_SOURCE -DXML_ENABLE_VISIBILITY=0 -Icfg -Ilib \
			-c "lib/$f.c" -o "cfg/$f.o" >>make.log 2>&1 ||
			{ tail -30 make.log; return 1; }
	done
	ar rcs cfg/libexpat.a cfg/xmlparse.o cfg/xmltok.o cfg/xmlrole.o
	mkdir -p "$P/lib" "$P/include"
	cp cfg/libexpat.a "$P/lib/"
	cp lib/expat.h lib/expat_external.h "$P/include/"
}
