// Package kubo holds what the simulated cluster needs of kubo-release beyond its jobs: a stand-in for its
// pid_utils package (pid_utils/pid_utils.sh), whose script is not among the sources here.
package kubo
