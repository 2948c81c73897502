# Writes, as JSON, TLS material in PEM for spec-tests/tls_agreement_test.go: per case a CA, a client
# certificate and its key, and a server certificate and key (P-256, for 127.0.0.1) from the same CA. Some
# cases OpenSSL (the template's checks) can read and Go (the launcher's) cannot use. Made with Ruby's OpenSSL
# because Go's crypto cannot make most of them (secp256k1, a negative serial, RSA 512).
require 'json'
require 'openssl'

def new_key(kind)
  case kind
  when /\Arsa(\d+)\z/ then OpenSSL::PKey::RSA.new(Regexp.last_match(1).to_i)
  when 'ed25519' then OpenSSL::PKey.generate_key('ED25519')
  else OpenSSL::PKey::EC.generate(kind)
  end
end

USAGES = {
  ca: { 'basicConstraints' => 'critical,CA:TRUE', 'keyUsage' => 'critical,keyCertSign,cRLSign' },
  client: { 'basicConstraints' => 'critical,CA:FALSE', 'keyUsage' => 'critical,digitalSignature,keyEncipherment',
            'extendedKeyUsage' => 'clientAuth' },
  server: { 'basicConstraints' => 'critical,CA:FALSE', 'keyUsage' => 'critical,digitalSignature,keyEncipherment',
            'extendedKeyUsage' => 'serverAuth', 'subjectAltName' => 'IP:127.0.0.1' },
}.freeze

def new_cert(name, key, serial, usage, issuer = nil)
  cert = OpenSSL::X509::Certificate.new
  cert.version = 2
  cert.serial = serial
  cert.subject = OpenSSL::X509::Name.parse("/CN=#{name}")
  cert.issuer = issuer ? issuer[:cert].subject : cert.subject
  cert.public_key = key
  cert.not_before = Time.now - 3600
  cert.not_after = Time.now + 7 * 86_400
  extensions = OpenSSL::X509::ExtensionFactory.new
  extensions.subject_certificate = cert
  extensions.issuer_certificate = issuer ? issuer[:cert] : cert
  USAGES.fetch(usage).each { |oid, value| cert.add_extension(extensions.create_ext(oid, value)) }
  cert.add_extension(extensions.create_ext('subjectKeyIdentifier', 'hash'))
  signer = issuer ? issuer[:key] : key
  cert.sign(signer, signer.oid == 'ED25519' ? nil : OpenSSL::Digest.new('SHA256'))
  cert
end

# case name => [CA key, CA serial, client key, client serial]
cases = {
  'an RSA 2048 CA and a P-256 client' => ['rsa2048', 1, 'prime256v1', 2],
  'a P-384 CA and an Ed25519 client' => ['secp384r1', 1, 'ed25519', 2],
  'a P-521 CA and an RSA 3072 client' => ['secp521r1', 1, 'rsa3072', 2],
  'a client certificate with serial 0' => ['prime256v1', 1, 'prime256v1', 0],
  'a secp256k1 client key' => ['prime256v1', 1, 'secp256k1', 2],
  'a secp256k1 CA' => ['secp256k1', 1, 'prime256v1', 2],
  'a P-224 client key' => ['prime256v1', 1, 'secp224r1', 2],
  'an RSA 1024 client key' => ['prime256v1', 1, 'rsa1024', 2],
  'an RSA 2047 client key' => ['prime256v1', 1, 'rsa2047', 2],
  'an RSA 512 client key' => ['prime256v1', 1, 'rsa512', 2],
  'an RSA 1024 CA' => ['rsa1024', 1, 'prime256v1', 2],
  'a client certificate with a negative serial' => ['prime256v1', 1, 'prime256v1', -2],
  'a CA with a negative serial' => ['prime256v1', -1, 'prime256v1', 2],
}
corpus = cases.to_h do |name, (ca_kind, ca_serial, client_kind, client_serial)|
  ca = { key: new_key(ca_kind) }
  ca[:cert] = new_cert('etcd-ca', ca[:key], ca_serial, :ca)
  key = new_key(client_kind)
  server_key = new_key('prime256v1')
  [name, { 'ca' => ca[:cert].to_pem, 'certificate' => new_cert('flanneld', key, client_serial, :client, ca).to_pem,
           'private_key' => key.private_to_pem,
           'server_certificate' => new_cert('etcd', server_key, 3, :server, ca).to_pem,
           'server_key' => server_key.private_to_pem }]
end
corpus['a CA bundle whose second certificate is secp256k1'] = corpus['an RSA 2048 CA and a P-256 client'].merge(
  'ca' => corpus['an RSA 2048 CA and a P-256 client']['ca'] + corpus['a secp256k1 CA']['ca']
)
puts JSON.generate(corpus)
