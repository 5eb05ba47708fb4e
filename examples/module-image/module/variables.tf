# A pool module: the controller always sets these two (contract/sections/image.md).
variable "bootstrap_data" {
  description = "The bootstrap data (cloud-init) every machine of the pool boots from."
  type        = string
  sensitive   = true
}

variable "captf_cluster_outputs" {
  description = "The exports of the cluster the pool joins."
  type        = any
}

variable "replicas" {
  type    = number
  default = 2
}
