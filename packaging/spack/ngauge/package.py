# SPDX-License-Identifier: BSD-3-Clause
# Spack package of ngauge (doc/install.md).  Copy packaging/spack/ngauge/ into a Spack repository
# (spack repo create, or $SPACK_ROOT/var/spack/repos/builtin/packages/) and set `git` below to where the
# tree is published; `spack install ngauge@main` then builds it with Meson like any other site package.

from spack.package import *


class Ngauge(MesonPackage):
    """Network benchmark framework: benchmark patterns (ping-pong, bandwidth, LogGP, pLogP, alltoall,
    one-sided synchronisation, overlap) over interchangeable communication modules (TCP, MPI,
    InfiniBand/RoCE verbs, UCX, an RDMA layer over verbs, shared memory or libfabric)."""

    # The repository this tree is published at (set it: the project has no public address yet).
    git = "https://git.example.org/ngauge.git"

    maintainers("ngauge")
    license("BSD-3-Clause")

    version("main", branch="main")

    variant("mpi", default=True, description="mpi and mpirma modules, MPI launch (plugin ngauge-mpi.so)")
    variant("verbs", default=True, description="ibrc, ibuc, ibud, RDMA backend verbs (plugin ngauge-verbs.so)")
    variant("libfabric", default=True, description="RDMA backend ofi (plugin ngauge-ofi.so)")
    variant("ucx", default=True, description="ucx module (plugin ngauge-ucx.so)")
    variant("pmix", default=False, description="PMIx bootstrap of a Slurm step's tasks without MPI (srun --mpi=pmix; plugin ngauge-pmix.so)")
    variant("plots", default=True, description="ngauge plot and report draw with gnuplot")

    depends_on("meson@1.0:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("gsl")
    depends_on("jansson")
    depends_on("mpi", when="+mpi")
    depends_on("rdma-core", when="+verbs")
    depends_on("libfabric", when="+libfabric")
    depends_on("ucx", when="+ucx")
    depends_on("pmix", when="+pmix")
    depends_on("gnuplot", type="run", when="+plots")

    def meson_args(self):
        def feature(name):
            return "enabled" if self.spec.satisfies("+" + name) else "disabled"

        args = [
            "-Dmpi=" + feature("mpi"),
            "-Dverbs=" + feature("verbs"),
            "-Dlibfabric=" + feature("libfabric"),
            "-Ducx=" + feature("ucx"),
            # The Soft-RoCE tests boot a QEMU guest: not part of a package build.
            "-Drxe_tests=disabled",
            "-Dpmix=" + feature("pmix"),
            # Slurm's libpmi2 comes with the site's Slurm, not from Spack.
            "-Dpmi2=disabled",
        ]
        if self.spec.satisfies("+mpi"):
            # The MPI implementation (meson -Dmpi_impl): Open MPI's pkg-config name is ompi-c, MPICH's mpich.
            args.append("-Dmpi_impl=" + ("ompi" if self.spec["mpi"].name == "openmpi" else "mpich"))
        return args

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_installed(self):
        ngauge = Executable(self.prefix.bin.ngauge)
        ngauge("--version")
        ngauge("-x", "tcp", "-p", "pingpong", "-s", "8", "-c", "10")
