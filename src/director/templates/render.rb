# Renders jobs for one instance with the BOSH director's own template evaluation (bosh-common's
# EvaluationContext and PropertyHelper, from the library directory given first), as the director's
# JobTemplateRenderer does: the job's properties are bound from the manifest's with the spec's defaults,
# every template and the monit file are ERB with trim mode '-', and every failing template of a job is
# reported at once.
#
# Usage: ruby render.rb BOSH_COMMON_LIB REQUEST_JSON
# Request: {"jobs": [{"name", "dir", "templates": {src: dst}, "property_defs": {name: default},
#                     "properties": {...manifest...}, "spec": {...template spec without properties...}}]}
# Answer on stdout: {"jobs": [{"name", "files": {dst: content}} or {"name", "error"}]}
$LOAD_PATH.unshift(ARGV.fetch(0))
require 'json'
require 'erb'
require 'bosh/common'
require 'bosh/common/template/evaluation_context'
require 'bosh/common/template/property_helper'

# Encodes link('x').address the way the director's DNS encoder does for a link without criteria: the
# group query of the provider's instance group, healthy instances first (q-s0).
class GroupQueryEncoder
  def encode_query(criteria, _use_short_dns)
    unknown = criteria.keys - %i[group_name group_type default_network deployment_name root_domain]
    raise "link address criteria #{unknown.join(', ')} are not simulated" unless unknown.empty?

    group = criteria[:group_name].to_s.downcase.tr('_', '-')
    "q-s0.#{group}.#{criteria[:default_network]}.#{criteria[:deployment_name]}.#{criteria[:root_domain]}"
  end
end

class Binder
  include Bosh::Common::Template::PropertyHelper

  def bind(definitions, manifest)
    bound = {}
    definitions.each { |name, default| copy_property(bound, manifest, name, default) }
    bound
  end
end

def render_file(path, context, label)
  erb = ERB.new(File.read(path), trim_mode: '-')
  erb.filename = label
  erb.result(context.get_binding)
rescue Exception => e # rubocop:disable Lint/RescueException -- a template may raise anything
  line = e.backtrace.to_a.find { |l| l.include?(label) }.to_s.split(':')[1] || 'unknown'
  raise "Error filling in template '#{File.basename(label)}' (line #{line}: #{e.message})"
end

def render_job(job, encoder)
  spec = job.fetch('spec').merge('properties' => Binder.new.bind(job.fetch('property_defs'), job.fetch('properties')))
  files = {}
  errors = []
  sources = { 'monit' => File.join(job['dir'], 'monit') }
  job.fetch('templates').each { |src, dst| sources[dst] = File.join(job['dir'], 'templates', src) }
  sources.each do |dst, path|
    context = Bosh::Common::Template::EvaluationContext.new(Marshal.load(Marshal.dump(spec)), encoder)
    files[dst] = render_file(path, context, File.join(job['name'], path.delete_prefix(job['dir'])))
  rescue StandardError => e
    errors << e.message
  end
  return { 'name' => job['name'], 'files' => files } if errors.empty?

  { 'name' => job['name'], 'error' => "Unable to render templates for job '#{job['name']}': #{errors.join('; ')}" }
end

request = JSON.parse(File.read(ARGV.fetch(1)))
encoder = GroupQueryEncoder.new
puts JSON.generate('jobs' => request.fetch('jobs').map { |job| render_job(job, encoder) })
