# Stands in for real machines: terraform_data is built in, so no provider is needed.
resource "terraform_data" "machine" {
  count = var.replicas
  input = {
    name          = "pool-machine-${count.index}"
    endpoint      = try(var.captf_cluster_outputs.endpoint, "")
    bootstrap_sha = sha256(var.bootstrap_data)
  }
}
