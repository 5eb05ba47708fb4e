# A long apply for the signal check: SIGTERM to the container must reach the runner, which stops
# terraform gracefully and exits 143.
resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "sleep 120"
  }
}
